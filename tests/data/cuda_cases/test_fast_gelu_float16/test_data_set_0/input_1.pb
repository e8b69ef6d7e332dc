
BbiasJr±èª‰πﬁ¢B4+3z7¢/