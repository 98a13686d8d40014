"""Store upkeep from the command line: `memsense migrate`, `memsense drop`, `memsense users`."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli.arguments import store_folder
from core.redact import redact_url


def cmd_migrate(args: argparse.Namespace) -> Any:
    from core.recall.migrate import migrate

    def show(done: int, total: int, stage: str) -> None:
        print(f"{stage} ({done}/{total})", file=sys.stderr)

    out = migrate(args.old, args.store, progress=None if args.json else show)
    same = out["store"] == args.old
    out["store"] = redact_url(out["store"])  # a Qdrant URL may carry a key
    if not args.json and "indexed" in out:
        print(f"{out['store']}: wrote the columns files of {out['indexed']} of {out['users']} users "
              f"({out['users'] - out['indexed']} had them)")
    elif not args.json:
        how = "converted in place" if same else f"into {out['store']}"
        print(f"migrated {out['users']} users ({out['chunks']} chunks) {how}")
    return out


def cmd_drop(args: argparse.Namespace) -> Any:
    from core.recall.backends import open_store

    store = open_store(args.store, write=True)
    try:
        store.drop_user(args.user)
    finally:
        store.close()
    if not args.json:
        print(f"dropped user {args.user!r} from {redact_url(args.store)}; ingest it again to bring it back")
    return {"dropped": args.user, "store": redact_url(args.store)}


def cmd_users(args: argparse.Namespace) -> Any:
    from core.recall.backends import open_store

    store = open_store(args.store)
    try:
        users = store.users()
    finally:
        store.close()
    if not args.json:
        print("\n".join(users))
    return users


def add_commands(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("migrate", help="convert a store of an older memsense (Qdrant local mode) or a Qdrant server")
    sp.add_argument("old", type=store_folder, help="the old store folder (or http(s):// URL of a Qdrant server)")
    sp.add_argument("--store", required=True, type=store_folder, help="the new store folder (created) or Qdrant server URL; the same "
                                                   "URL as OLD converts that server in place to one collection for all users")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_migrate)
    sp = sub.add_parser("drop", help="remove one user (damaged or unwanted) from a store; other users stay")
    sp.add_argument("--store", required=True, type=store_folder, help="the store folder (or http(s):// Qdrant URL)")
    sp.add_argument("--user", required=True, help="the user to remove")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_drop)
    sp = sub.add_parser("users", help="list the users of a store")
    sp.add_argument("--store", required=True, type=store_folder, help="the store folder (or http(s):// Qdrant URL)")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_users)
