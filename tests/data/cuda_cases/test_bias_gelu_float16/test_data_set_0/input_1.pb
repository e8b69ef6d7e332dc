
BbiasJA2v.Î¯V¹ê90x»)»