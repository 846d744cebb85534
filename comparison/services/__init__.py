"""Comparison services: launching jobs, computing metric scores, results and exports."""
