"""A built wiki: the page format, front matter, block structure, and reading wiki/
back. No imports here: each module is loaded as needed."""
