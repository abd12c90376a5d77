#!/usr/bin/env python3
"""Builds examples/desktop-host.json from the shared fixture catalogs.

The example is what a desktop chat host would hand toolreg: a handful of real MCP servers
(their tool lists as last cached) with approval rules, one host-registered tool, and a scope.
Run from the repo root: python3 scripts/make-example.py ../shared/fixtures/mcp-catalogs
"""
import json
import sys
from pathlib import Path

catalogs = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/fixtures/mcp-catalogs")
servers = [
    # (fixture id, display name, transport, approval tools)
    ("github", "GitHub", {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}, ["delete_file", "delete_repository", "merge_pull_request"]),
    ("notion", "Notion", {"type": "stdio", "command": "npx", "args": ["-y", "@notionhq/notion-mcp-server"]}, []),
    ("playwright", "Playwright", {"type": "stdio", "command": "npx", "args": ["@playwright/mcp@latest"]}, []),
    ("mcp-filesystem", "Filesystem", {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents"]}, ["write_file", "edit_file", "move_file"]),
    ("mcp-time", "Time", {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}, []),
    ("stripe", "Stripe", {"type": "stdio", "command": "npx", "args": ["-y", "@stripe/mcp", "--tools=all"], "env": {"STRIPE_SECRET_KEY": "sk_test_redacted"}}, ["create_refund"]),
]
out = {
    "about": "A desktop chat host's tool setup, built by scripts/make-example.py from real MCP servers' tool lists (shared/fixtures/mcp-catalogs; each list is what the server's tools/list returned).",
    "model": "gpt-4o",
    "contextWindow": 128000,
    "scope": {"settings": {"enableWebSearch": True}, "knowledgeBaseIds": ["kb-handbook"]},
    "entries": [
        {
            "name": "create_note",
            "namespace": "notes",
            "description": "Create a note in the app's notebook with a title and markdown body.",
            "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string", "description": "Markdown."}}, "required": ["title", "body"]},
            "defer": "never",
        }
    ],
    "servers": [],
}
for sid, name, transport, approval in servers:
    data = json.loads((catalogs / f"{sid}.json").read_text())
    tools = [{k: t[k] for k in ("name", "title", "description", "inputSchema", "annotations") if k in t} for t in data["tools"]]
    out["servers"].append({
        "id": sid, "name": name, "enabled": True, "transport": transport,
        "approvalTools": approval, "disabledTools": [],
        "source": data.get("source"), "license": data.get("license"),
        "tools": tools,
    })
Path("examples/desktop-host.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
print(f"wrote examples/desktop-host.json: {len(out['servers'])} servers, {sum(len(s['tools']) for s in out['servers'])} tools")
