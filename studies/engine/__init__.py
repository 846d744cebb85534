"""Django-free rules of a study's design: which free places of the pool a participant takes."""
