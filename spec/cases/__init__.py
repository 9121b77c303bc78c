"""Cases that tie the steps together: a tile layout and its descriptor (desc case), the TMA boxes of
a tile and the descriptors of each MMA along K (recipe case): the inputs of `layoutproof fuzz`."""
