"""The project's statistics in one Django-free package: plain functions over plain data that raise StatsError."""
