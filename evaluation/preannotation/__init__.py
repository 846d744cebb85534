"""Pre-annotation jobs: launch, execute (model-major, cached, resumable) and observe ensemble runs."""
