"""An asyncio HTTP/1.1 server for the runner benchmarks, run in its own process.

    python benchmarks/aio_server.py --delay-ms 200

Answers every POST with ``{"ranked_ids": ["<id>-a", "<id>-b"]}`` (``id`` from the JSON
body) after ``--delay-ms``, on keep-alive connections, with one coroutine per connection
(so hundreds of requests in flight cost no threads). Prints its URL on the first line
and serves until its standard input closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 delay_s: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length) if length else b"{}"
            try:
                case_id = str(json.loads(body).get("id", ""))
            except ValueError:
                case_id = ""
            await asyncio.sleep(delay_s)
            out = json.dumps({"ranked_ids": [f"{case_id}-a", f"{case_id}-b"]}).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(out)).encode() + b"\r\n\r\n" + out)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def serve(delay_s: float) -> None:
    server = await asyncio.start_server(lambda r, w: handle(r, w, delay_s), "127.0.0.1", 0,
                                        backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until stdin closes
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay-ms", type=float, default=200.0)
    args = parser.parse_args()
    asyncio.run(serve(args.delay_ms / 1000.0))


if __name__ == "__main__":
    main()
