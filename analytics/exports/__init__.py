"""Exports of a dataset for other tools (JSONL, CSV, Parquet, Label Studio, factgenie), each with a data card."""
