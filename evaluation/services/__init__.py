"""Write-side workflows of the evaluation app."""
