"""Judging real compilers' answers (`fuzz --against` adapters under solver/fuzz/adapters/) against spec."""
