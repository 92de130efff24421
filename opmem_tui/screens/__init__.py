"""Screens: the main browser and the modal dialogs it opens."""
