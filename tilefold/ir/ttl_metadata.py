"""Typed ``ttl.*`` tables of the TT-Lang pipeline: attributes that verify themselves.

Reads / writes: nothing. Records of the ``ttl`` dialect, made as :mod:`tilefold.ir.metadata`
makes the ``tt`` ones (a record checks its fields when a pass or the parser makes it):

* ``ttl.circular_buffers`` (on the module) — a list of :class:`CBEntryAttr`, one per buffer:
  ``#ttl.cb_entry<index, name, shape, data_format, layout, block_count, page_size, block_pages,
  num_pages[, tile]>`` (``tile``: the height and width of tiles other than 32x32) (written by ``ttl-annotate-cb-associations``, read by the program builder).
* ``ttl.pipe_nets`` (on the module) — a list of :class:`PipeNetAttr`,
  ``#ttl.pipe_net<net, recv_cb, block_bytes>``: per pipe net, the buffer blocks are received into
  and the block size (the position in the list numbers the net's semaphores).
* ``ttl.compile_args`` / ``ttl.runtime_args`` (on a kernel function) — lists of
  :class:`KernelArgAttr`, ``#ttl.arg<kind, index[, role, slot, field]>``: what each compile-time /
  runtime argument of the kernel is, so the program builder gives every core its values.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, NoneAttr, StringAttr
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.exceptions import VerifyException

from tilefold.ir.metadata import _FORMATS, Field, Record, _int, _int_list, _one_of

_OPT_INT = IntegerAttr | NoneAttr
_OPT_STR = StringAttr | NoneAttr


@irdl_attr_definition
class CBEntryAttr(Record):
    """``#ttl.cb_entry<...>``: one circular buffer of a TT-Lang program, as the host creates it."""

    name = "ttl.cb_entry"

    index: _OPT_INT
    buffer_name: _OPT_STR
    shape: ArrayAttr | NoneAttr
    data_format: _OPT_STR
    layout: _OPT_STR
    block_count: _OPT_INT
    page_size: _OPT_INT
    block_pages: _OPT_INT
    num_pages: _OPT_INT
    tile: ArrayAttr | NoneAttr      # (height, width) of a buffer of tiles other than 32x32

    FIELDS = (
        Field("index", True, _int(0)),
        Field("name", True, lambda v: None if isinstance(v, str) and v else "a buffer name"),
        Field("shape", True, _int_list()),
        Field("data_format", True, _one_of(*_FORMATS)),
        Field("layout", True, _one_of("TILE", "ROW_MAJOR")),
        Field("block_count", True, _int(1)),
        Field("page_size", True, _int(1)),
        Field("block_pages", True, _int(1)),
        Field("num_pages", True, _int(1)),
        Field("tile", False, _int_list()),
    )

    def verify(self) -> None:
        super().verify()
        f = self.to_dict()
        if f["num_pages"] != f["block_pages"] * f["block_count"]:
            raise VerifyException(f"#ttl.cb_entry {f['name']}: num_pages {f['num_pages']} is not block_pages "
                                  f"{f['block_pages']} x block_count {f['block_count']}")


@irdl_attr_definition
class PipeNetAttr(Record):
    """``#ttl.pipe_net<net, recv_cb, block_bytes[, landing_cb, landing_slots, receive_slots, ready_slots,
    valid_slots, landing_depth, mailbox_depth, receive_buffers]>``: a pipe net, the buffer its blocks are received into, the size of a
    block in bytes and — for a net whose nodes both send and receive — the buffer its blocks land in,
    its number of slots (each with a semaphore after the nets' own) and the most pipes a node receives
    from; the most pipes a node sources, and the receive slots of a net without a landing buffer
    (each with a ``valid`` semaphore); ``landing_depth``: blocks each landing slot holds (see
    :func:`landing_layout`); ``mailbox_depth``: instead of a landing buffer, the blocks each slot of
    the net's DRAM mailbox holds (a net whose receives all land in tensor slices); ``receive_buffers``:
    how many buffers its receives take blocks of, when more than one (a sender then always writes
    where the receiver posted its block, its own node's receive included)."""

    name = "ttl.pipe_net"

    net: _OPT_INT
    recv_cb: _OPT_INT
    block_bytes: _OPT_INT
    landing_cb: _OPT_INT
    landing_slots: _OPT_INT
    receive_slots: _OPT_INT
    ready_slots: _OPT_INT
    valid_slots: _OPT_INT
    landing_depth: _OPT_INT
    mailbox_depth: _OPT_INT
    receive_buffers: _OPT_INT

    FIELDS = (Field("net", True, _int(0)), Field("recv_cb", True, _int(0)), Field("block_bytes", True, _int(1)),
              Field("landing_cb", False, _int(0)), Field("landing_slots", False, _int(1)),
              Field("receive_slots", False, _int(1)), Field("ready_slots", False, _int(1)),
              Field("valid_slots", False, _int(1)), Field("landing_depth", False, _int(1)),
              Field("mailbox_depth", False, _int(1)), Field("receive_buffers", False, _int(1)))


def net_layout(fields: dict) -> dict[str, int]:
    """Where each semaphore of one pipe net (its ``#ttl.pipe_net`` fields) sits among the net's own:
    a ``valid`` per receive slot (pipes reaching a common node have different slots, so one node's
    receives never share a flag; a net with a landing buffer flags its slots instead and has none),
    ``one``, a ``ready`` per pipe a node sources (the most any node does); a net without a landing
    buffer then has an ``outbox`` (a receiver's block address, sent to the sender) and an
    ``address`` per ready (where the sender's receivers hold their block). ``count``: how many."""
    landing = fields.get("landing_cb") is not None or bool(fields.get("mailbox_depth"))
    valid = 0 if landing else fields.get("valid_slots") or 1
    ready = fields.get("ready_slots") or 1
    layout = {"valid": 0, "one": valid, "ready": valid + 1, "outbox": valid + 1 + ready,
              "address": valid + 2 + ready}
    layout["count"] = valid + 1 + ready + (0 if landing else 1 + ready)
    return layout


def net_semaphores(fields: dict) -> int:
    """How many semaphores one pipe net takes (see :func:`net_layout`)."""
    return net_layout(fields)["count"]


def landing_layout(fields: dict) -> dict[str, int]:
    """Where each semaphore a landing net takes after the nets' own sits among its landing ones: a
    ``flag`` per landing slot; with a ``landing_depth`` over 1 (a slot holding that many blocks, as
    a receiving buffer of that many), a flag per block of each slot, then a count of the blocks
    ``received`` from each slot and one of the blocks ``sent`` on each pipe a node sources (words
    each node keeps for itself), and a ``credit`` per block of each pipe a node sources (each word
    has one write in flight at a time). ``count``: how many."""
    slots = fields.get("landing_slots") or 0
    depth = fields.get("landing_depth") or 1
    if fields.get("mailbox_depth"):
        # a DRAM mailbox: counting words — the blocks that ``flag`` (arrived) in each slot, those
        # ``received`` from it and those ``sent`` on each pipe a node sources (the ``ready`` of the
        # net counts the sender's credits)
        ready = fields.get("ready_slots") or 1
        return {"flag": 0, "received": slots, "sent": 2 * slots, "count": 2 * slots + ready}
    if depth == 1:
        return {"flag": 0, "count": slots}
    ready = fields.get("ready_slots") or 1
    flags = slots * depth
    return {"flag": 0, "received": flags, "sent": flags + slots, "credit": flags + slots + ready,
            "count": flags + slots + ready + ready * depth}


def landing_semaphores(fields: dict) -> int:
    """How many semaphores a landing net takes after the nets' own (see :func:`landing_layout`)."""
    return landing_layout(fields)["count"]


# the module attribute holding TT-Lang's PipeNet active set: rectangles (x0, y0, x1, y1) of the nodes
# whose kernels run (absent: every node of the grid)
ACTIVE_NODES_ATTR = "ttl.active_nodes"
# the module attribute listing the buffers nothing waits on whose blocks are pushed and stay (staging
# blocks read before their push, more than a buffer holds on some node): pages left there are no news
STAGING_BUFFERS_ATTR = "ttl.staging_buffers"


def pipe_semaphore_roles(module) -> list[tuple[int, str]]:
    """(pipe net index, kind) of each semaphore the module's pipe nets take, in id order: the nets'
    own (:func:`net_layout`'s kinds), then those of their landing slots (:func:`landing_layout`'s)."""
    attr = module.attributes.get("ttl.pipe_nets")
    entries = [entry.to_dict() for entry in attr.data] if attr is not None else []
    roles = []
    for layout_of in (net_layout, landing_layout):
        for fields in entries:
            layout = layout_of(fields)
            starts = sorted(((at, kind) for kind, at in layout.items() if kind != "count"), key=lambda s: s[0])
            for word in range(layout["count"]):
                roles.append((fields["net"], [kind for at, kind in starts if at <= word][-1]))
    return roles


def pipe_semaphores(module) -> int:
    """How many semaphores a module's pipe nets take (their own, then those of the landing slots);
    the operation's own ``ttl.Semaphore`` s come after them."""
    attr = module.attributes.get("ttl.pipe_nets")
    entries = [entry.to_dict() for entry in attr.data] if attr is not None else []
    return sum(net_semaphores(e) + landing_semaphores(e) for e in entries)


# the kinds of kernel argument, and what each one is
ARG_KINDS = {
    "cb": "a circular buffer index (compile-time)",
    "accessor": "the TensorAccessorArgs of operation tensor <index> (compile-time, several words)",
    "node": "the node's logical x (index 0), y (index 1) or device index in the operation's device domain (index 2)",
    "address": "the base address of operation tensor <index>",
    "mailbox_accessor": "the TensorAccessorArgs of the DRAM mailbox of pipe net <index> (compile-time)",
    "mailbox_address": "the base address of the DRAM mailbox of pipe net <index>",
    "pipe_count": "how many pipes of net <index> the node is the role of",
    "pipe": "one field of pipe <slot> of net <index> for the node's role",
    "pipe_named": "one field of the net's pipe <slot> (a pipe the kernel names) for the role <role>",
    "pipe_peer": "a logical coordinate of the other end of pipe <slot> of net <index> (ttl.pipe_peer)",
    "noc": "the NOC x / y (field) of the node with linear index <index>",
    "noc_rect": "a NOC corner (x0 y0 x1 y1) or the node count (dests) of multicast rectangle <index> of the "
                "operation's semaphores",
}
COMPILE_TIME_KINDS = ("cb", "accessor", "mailbox_accessor")
# the fields of one pipe of a net, by the node's role in it
PIPE_FIELDS = {"src": ("x0", "y0", "x1", "y1", "dests", "remote", "loopback", "index", "src_slot", "mailbox_block"),
               "dst": ("x", "y", "self", "index", "src_slot", "mailbox_block")}
# the logical coordinates of the other end of a pipe: the destinations' rectangle of a source, the
# source of a destination (``linear``: y * grid columns + x of its first core; ``first`` / ``stop``:
# the linear destination range of a pipe written as one, over all its routes; ``device``: the other
# end's device index in the operation's device domain)
NOC_FIELDS = ("x", "y", "x0", "y0", "x1", "y1", "dests")
# a kernel whose runtime arguments share words, two small ones each (the low half first): the
# arguments of each word, by their place in ``ttl.runtime_args``
RUNTIME_WORDS_ATTR = "ttl.runtime_arg_words"
PEER_FIELDS = {"src": ("x0", "y0", "x1", "y1", "linear", "first", "stop", "device"), "dst": ("x", "y", "linear", "device")}


@irdl_attr_definition
class KernelArgAttr(Record):
    """``#ttl.arg<kind, index[, role, slot, field]>``: one argument of a kernel (see
    :data:`ARG_KINDS`). A pipe argument names the node's role (``src`` sends, ``dst`` receives), and
    a ``pipe`` argument also the slot (the node's n-th pipe in that role) and the field
    (:data:`PIPE_FIELDS`: NOC rectangle, destination counts and loopback of a source; the source's
    NOC x / y and whether it is the node itself, of a destination)."""

    name = "ttl.arg"

    kind: _OPT_STR
    index: _OPT_INT
    role: _OPT_STR
    slot: _OPT_INT
    field: _OPT_STR

    FIELDS = (
        Field("kind", True, _one_of(*ARG_KINDS)),
        Field("index", True, _int(0)),
        Field("role", False, _one_of(*PIPE_FIELDS)),
        Field("slot", False, _int(0)),
        Field("field", False, _one_of(*sorted({f for fs in (*PIPE_FIELDS.values(), *PEER_FIELDS.values(), NOC_FIELDS)
                                               for f in fs}))),
    )

    @staticmethod
    def of(kind: str, index: int, role: str | None = None, slot: int | None = None,
           field: str | None = None) -> KernelArgAttr:
        return KernelArgAttr.from_dict({"kind": kind, "index": index, "role": role, "slot": slot, "field": field})

    def verify(self) -> None:
        super().verify()
        f = self.to_dict()
        kind = f["kind"]
        pipe = {"role", "slot", "field"} if kind in ("pipe", "pipe_named", "pipe_peer") else {"role"} if kind == "pipe_count" \
            else {"field"} if kind in ("noc", "noc_rect") else set()
        if set(f) - {"kind", "index"} != pipe:
            raise VerifyException(f"#ttl.arg<kind = {kind!r}> has fields kind, index"
                                  f"{''.join(', ' + n for n in ('role', 'slot', 'field') if n in pipe)}, not "
                                  f"{', '.join(f)}")
        if kind == "node" and f["index"] > 2:
            raise VerifyException("#ttl.arg<kind = \"node\"> has index 0 (x), 1 (y) or 2 (device)")
        fields = PIPE_FIELDS if kind in ("pipe", "pipe_named") else PEER_FIELDS if kind == "pipe_peer" else None
        if fields is not None and f["field"] not in fields[f["role"]]:
            raise VerifyException(f"#ttl.arg<kind = {kind!r}>: a {f['role']} pipe has no field {f['field']!r} "
                                  f"(its fields: {', '.join(fields[f['role']])})")


ATTRIBUTES = [CBEntryAttr, PipeNetAttr, KernelArgAttr]

__all__ = ["CBEntryAttr", "PipeNetAttr", "KernelArgAttr", "RUNTIME_WORDS_ATTR", "ARG_KINDS", "COMPILE_TIME_KINDS",
           "PIPE_FIELDS", "PEER_FIELDS",
           "ATTRIBUTES"]
