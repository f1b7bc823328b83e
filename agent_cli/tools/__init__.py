"""Tools: a pydantic input model + a handler + flags saying what the call may touch."""
