"""Prompt templates: the jinja2 files in this folder, and `loader.Prompts`, which
renders them. Light on purpose: the no-op check finds the templates from here
without importing jinja2."""

from pathlib import Path

PACKAGE_DIR = Path(__file__).parent  # the shipped *.j2 templates
PROJECT_DIR = "prompts"  # a project's own overrides, by the same file names
