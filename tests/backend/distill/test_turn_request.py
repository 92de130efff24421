"""What a turn asked: its request as the timeline tells it."""

from __future__ import annotations

from opmem_tui.backend.home import Home

from .conftest import Chat, extract_all


def test_a_prompt_copied_out_of_a_terminal_box_is_told_without_the_box(home: Home):
    # read in the crush fixture: the prompt kept the input box's borders
    chat = Chat(home, "s2")
    chat.user("┃ Add the readme to the conversion package while respecting the ┃\n┃ project structure ┃")
    chat.reply("Sure, what should it hold?")
    chat.commit()
    [extraction] = extract_all(home).values()
    [facts] = extraction.facts
    assert facts.request == "Add the readme to the conversion package while respecting the project structure"
