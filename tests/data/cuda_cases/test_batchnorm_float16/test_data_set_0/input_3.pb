
BmeanJÜµª)Ž´