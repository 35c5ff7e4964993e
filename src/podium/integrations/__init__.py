"""Adapters for agents and tools built with other libraries (``langchain.py``: LangChain tools, LangGraph graphs).

Each adapter needs its own extra and imports its library only when used.
"""
