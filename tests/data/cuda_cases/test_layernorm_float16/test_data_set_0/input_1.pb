
BscaleJh1t¹:¹™¸F6“·$˜ã»