"""The command palette provider: opmem's own commands, listed by the screen that is open."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider


@dataclass(frozen=True)
class PaletteCommand:
    title: str
    help: str
    callback: Callable[[], object]


@runtime_checkable
class HasPaletteCommands(Protocol):
    """A screen with commands of its own for the palette."""

    def palette_commands(self) -> list[PaletteCommand]: ...


# Textual's own system commands that ours replace.
REPLACED_SYSTEM_COMMANDS = {"Theme", "Keys"}


class OpmemCommands(Provider):
    """Asks the active screen for `palette_commands()`, so commands follow the context, then
    lists Textual's system commands after ours (one provider: a fixed order)."""

    def _commands(self) -> list[PaletteCommand]:
        commands: list[PaletteCommand] = []
        screen = self.screen
        try:
            if isinstance(screen, HasPaletteCommands):
                commands.extend(screen.palette_commands())
        except Exception as exc:  # a broken command list must not break the palette
            self.app.notify(f"Command list failed: {exc}", severity="error", markup=False)
        for system in self.app.get_system_commands(self.screen):
            if system.title not in REPLACED_SYSTEM_COMMANDS:
                commands.append(PaletteCommand(system.title, system.help, system.callback))
        return commands

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.title, command.callback, text=command.title, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(command.title), command.callback, text=command.title, help=command.help
                )
