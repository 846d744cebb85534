"""Views of studies: setting one up and its page, joining by link, the end page, participants."""
