"""Adapters that put an outside oracle behind `layoutproof fuzz --against CMD` (one module per oracle)."""
