# size_bytes cumulative_fraction (made up for the schema test)
0 0
1000 0.5
20000 0.9
200000 1
