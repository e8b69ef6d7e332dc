
BscaleJ}¸Z»¸