"""Write-side workflows of the annotation app (import, export, tokens, campaigns, judgments)."""
