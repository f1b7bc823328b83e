"""Claude Code's own files read as they are: custom slash commands, agent definitions and
skills from `.claude/` (and `.agent-cli/`) in the project and in the user's home. Only
reading and parsing live here; running them is the ui's and the team's."""
