"""What a compute thread's unpacker, math engine (FPU and SFPU) and packer are configured for.

Reads: the name and CB arguments of each ``*_init`` / ``*_uninit`` / ``reconfig`` call, and the
data format of each CB (through a ``format_of(cb)`` function). Writes: nothing but its own
state; :meth:`EngineConfig.check_fpu`, :meth:`check_sfpu` and :meth:`check_pack` return the
message of the error a compute call makes (None: the engines are configured for it).

The rules follow TT-Metalium 0.69's compute API (``api/compute/*.h``):

* the *full* inits — ``compute_kernel_hw_startup``, ``binary_op_init_common``,
  ``unary_op_init_common``, ``init_sfpu``, ``mm_init``, ``mm_block_init``, ``transpose_wh_init``
  and ``unary_bcast_init<type>(in, out)`` — configure the hardware: SrcA / SrcB data formats, the
  packer's format, and (except
  ``compute_kernel_hw_startup`` and ``binary_op_init_common``) the op family; nothing else
  changes formats except ``reconfig_data_format[_srca|_srcb]``, ``pack_reconfig_data_format``
  and the ``*_with_dt`` inits;
* an FPU call runs the op family its unpacker and math engine were last set up for: ``copy``
  (``copy_tile_init``, ``copy_tile_to_dst_init_short[_with_dt]``, ``unary_op_init_common``,
  ``init_sfpu``), an element-wise op with its broadcast (``add_tiles_init``, ...,
  ``mul_bcast_rows_init_short``, ...), ``matmul`` (``mm_[block_]init[_short]``), ``reduce``
  with its pool type and dimension (``reduce_init``), ``transpose`` (``transpose_wh_init``),
  ``tilize`` / ``untilize`` (their inits); ``reduce_uninit`` / ``tilize_uninit`` /
  ``untilize_uninit`` leave no op family set;
* an SFPU call needs its own init (its row of :mod:`tilefold.ir.sfpu`) to be the SFPU's latest
  (``exp_tile`` after ``exp_tile_init``), with the same template arguments
  (``typecast_tile<Float32, Float16_b>`` after ``typecast_tile_init<Float32, Float16_b>``); the
  template arguments only an init takes are constants it programs into the SFPU, which the call
  reads (:meth:`EngineConfig.sfpu_init_values`: ``exp_tile_init<true, scale>``'s scale);
* the CBs an FPU call reads must have the formats SrcA and SrcB are configured for (element-wise
  and copy: in0 → SrcA, in1 → SrcB; matmul: in1 → SrcA, in0 → SrcB; reduce: input → SrcA,
  scaler → SrcB), and a pack's CB the packer's format;
* ``pack_rows_init(n)`` sets the packer to pack ``n`` rows of DST until ``pack_rows_uninit()``:
  ``pack_rows`` runs only in between, ``pack_tile`` only outside.
"""

from __future__ import annotations

from tilefold.ir.ttkernel_api import API

FULL_INITS = {
    # name -> (SrcA CB arg, SrcB CB arg, pack CB arg, op family set or None)
    "compute_kernel_hw_startup": (0, 1, 2, None),
    "binary_op_init_common": (0, 1, 2, None),
    "unary_op_init_common": (0, 0, 1, ("copy",)),
    "init_sfpu": (0, 0, 1, ("copy",)),
    "mm_init": (1, 0, 2, ("matmul",)),
    "mm_block_init": (1, 0, 2, ("matmul",)),
    "transpose_wh_init": (0, 0, 1, ("transpose",)),
}

# short inits setting the op family only (element-wise ones are added below)
FAMILY_INITS = {
    "copy_tile_init": ("copy",),
    "copy_tile_to_dst_init_short": ("copy",),
    "copy_tile_to_dst_init_short_with_dt": ("copy",),
    "mm_init_short": ("matmul",),
    "mm_block_init_short": ("matmul",),
    "transpose_wh_init_short": ("transpose",),
    "tilize_init": ("tilize",),
    "untilize_init": ("untilize",),
}
for _op in ("add", "sub", "mul"):
    FAMILY_INITS[f"{_op}_tiles_init"] = ("binary", _op, None)
for _name, _op, _bcast in (("add_bcast_rows_init_short", "add", "rows"), ("add_bcast_cols_init_short", "add", "cols"),
                           ("add_bcast_scalar_init_short", "add", "scalar"), ("sub_bcast_cols_init_short", "sub", "cols"),
                           ("sub_tiles_bcast_scalar_init_short", "sub", "scalar"),
                           ("mul_bcast_rows_init_short", "mul", "rows"), ("mul_bcast_cols_init_short", "mul", "cols"),
                           ("mul_tiles_bcast_scalar_init_short", "mul", "scalar")):
    FAMILY_INITS[_name] = ("binary", _op, _bcast)

UNINITS = frozenset({"reduce_uninit", "tilize_uninit", "untilize_uninit"})

# the init families of the calls that run on the SFPU (the API table's ``family`` of each row)
SFPU_FAMILIES = ("sfpu", "where", "copy_dest", "transpose_dest")
# the inits that configure the SFPU: those the SFPU calls name (``init`` of their API rows)
SFPU_INITS = frozenset(f.init for f in API.values() if f.family in SFPU_FAMILIES)


def sfpu_init_of(call: str) -> str:
    """The init SFPU call ``call`` (``exp_tile``, ``copy_dest_values`` ...) needs: its API row's ``init``."""
    return API[call].init


def sfpu_init_text(init: str, templates: dict | None) -> str:
    """An SFPU init as the SFPU is configured by it: with its template arguments, if any
    (``typecast_tile_init<Float32, Float16_b>``); a call needs the one with its own arguments."""
    return f"{init}<{', '.join(str(v) for v in templates.values())}>" if templates else init


def _name(fmt) -> str:
    return "no circular buffer" if fmt is None else fmt.ttnn_name


def family_name(family: tuple | None) -> str:
    """How a message names an op family."""
    if family is None:
        return "no operation"
    kind = family[0]
    if kind == "binary":
        return f"{family[1]}_tiles" + (f"_bcast_{family[2]}" if family[2] else "")
    if kind == "reduce":
        return f"reduce ({family[1]}, {family[2]})"
    if kind == "unary_bcast":
        return f"unary_bcast<BroadcastType::{family[1]}>"
    return {"copy": "copy_tile", "matmul": "matmul", "transpose": "transpose_wh_tile"}.get(kind, f"{kind}_block")


class EngineConfig:
    """Configuration state of one compute thread's engines (see the module docstring)."""

    __slots__ = ("format_of", "configured", "src", "pack", "family", "family_by", "sfpu", "sfpu_init", "sfpu_args",
                 "pack_rows")

    def __init__(self, format_of):
        self.format_of = format_of              # cb -> (CB index, DataFormat or None if no such CB)
        self.configured = False                 # a full init has run
        self.src = [None, None]                 # SrcA, SrcB: (format, CB, init that set it)
        self.pack = None                        # (format, CB, init)
        self.family = None                      # FPU op family the unpacker and math are set for
        self.family_by = None                   # the init that set it
        self.sfpu = None                        # latest SFPU init, with its template arguments
        self.sfpu_init = None                   # its name
        self.sfpu_args = {}                     # its template arguments
        self.pack_rows = None                   # pack_rows_init(n): the packer packs n rows of DST, not tiles

    def snapshot(self) -> tuple:
        return (self.configured, tuple(self.src), self.pack, self.family, self.family_by, self.sfpu, self.sfpu_init,
                tuple(self.sfpu_args.items()), self.pack_rows)

    def restore(self, state: tuple) -> None:
        (self.configured, src, self.pack, self.family, self.family_by, self.sfpu, self.sfpu_init, args,
         self.pack_rows) = state
        self.src = list(src)
        self.sfpu_args = dict(args)

    def _source(self, i: int, cb, name: str) -> None:
        self.src[i] = self._described(cb, name)

    def _described(self, cb, name: str) -> tuple:
        index, fmt = self.format_of(cb)
        return fmt, index, name

    def apply(self, name: str, args: tuple, kwargs: dict) -> None:
        """Record the configuration an init / uninit / reconfig call ``name`` sets."""
        full = FULL_INITS.get(name)
        if full is not None:
            a, b, out, family = full
            if name == "compute_kernel_hw_startup" and len(args) == 2:
                a, b, out = 0, 0, 1
            self.configured = True
            self._source(0, args[a], name)
            self._source(1, args[b], name)
            self.pack = self._described(args[out], name)
            self.family, self.family_by = family, name
        elif name == "unary_bcast_init":          # a full init for one CB, in and out
            self.configured = True
            self._source(0, args[0], name)
            self._source(1, args[0], name)
            self.pack = self._described(args[1], name)
            self.family, self.family_by = ("unary_bcast", kwargs.get("bcast_type")), name
        elif name in FAMILY_INITS:
            self.family, self.family_by = FAMILY_INITS[name], name
            if name == "copy_tile_to_dst_init_short_with_dt":
                self._source(0, args[1], name)
        elif name == "reduce_init":
            self.family = ("reduce", kwargs.get("pool_type", "SUM"), kwargs.get("reduce_dim", "REDUCE_ROW"))
            self.family_by = name
        elif name in UNINITS:
            self.family, self.family_by = None, name
        elif name == "reconfig_data_format":
            self._source(0, args[1] if len(args) == 4 else args[0], name)
            self._source(1, args[-1], name)
        elif name == "reconfig_data_format_srca":
            self._source(0, args[-1], name)
        elif name == "reconfig_data_format_srcb":
            self._source(1, args[-1], name)
        elif name == "pack_reconfig_data_format":
            self.pack = self._described(args[-1], name)
        elif name in SFPU_INITS:
            self.sfpu = sfpu_init_text(name, kwargs)
            self.sfpu_init, self.sfpu_args = name, dict(kwargs)
        elif name == "pack_rows_init":
            self.pack_rows = args[0]
        elif name == "pack_rows_uninit":
            self.pack_rows = None

    def _not_configured(self, call: str) -> str | None:
        if self.configured:
            return None
        return (f"{call} before the engines are configured: call a full init first (binary_op_init_common, "
                f"init_sfpu, mm_init, compute_kernel_hw_startup, ...)")

    def check_fpu(self, call: str, family: tuple, srca_cb=None, srcb_cb=None) -> str | None:
        """The error of FPU call ``call`` of op family ``family`` reading ``srca_cb`` into SrcA and
        ``srcb_cb`` into SrcB, or None."""
        message = self._not_configured(call)
        if message is not None:
            return message
        if self.family != family:
            by = f" (by {self.family_by})" if self.family_by else ""
            return (f"{call} while the unpacker and math engine are set up for {family_name(self.family)}{by}; "
                    f"call the init of {family_name(family)} first")
        for i, cb in ((0, srca_cb), (1, srcb_cb)):
            if cb is None:
                continue
            cb, fmt = self.format_of(cb)
            have, have_cb, by = self.src[i]
            if fmt != have:
                reg = "AB"[i]
                fix = "reconfig_data_format_srca" if i == 0 else "reconfig_data_format_srcb"
                return (f"{call} reads c_{cb} ({_name(fmt)}) into Src{reg}, which {by} configured for "
                        f"{_name(have)} (c_{have_cb}); call {fix}(c_{cb}) or reconfig_data_format first")
        return None

    def check_sfpu(self, call: str, templates: dict | None = None) -> str | None:
        """The error of SFPU call ``call`` (with its template arguments, which its init must share),
        or None."""
        message = self._not_configured(call)
        if message is not None:
            return message
        init = sfpu_init_of(call)
        need = sfpu_init_text(init, templates)
        if not (self.sfpu == need if templates else self.sfpu_init == init):
            now = f"the latest SFPU init is {self.sfpu}" if self.sfpu else "no SFPU init ran"
            return f"{call} without {need}: {now}; call {need}() before it"
        return None

    def sfpu_init_values(self, op) -> tuple:
        """The constants SFPU row ``op`` reads from its init: the latest init's values of
        ``op.init_templates``, in order (the defaults where it left them out)."""
        return tuple(self.sfpu_args.get(name, default) for name, default in op.init_templates)

    def check_pack(self, call: str, cb) -> str | None:
        """The error of a pack by ``call`` into CB ``cb``, or None."""
        message = self._not_configured(call)
        if message is not None:
            return message
        if (self.pack_rows is not None) != (call == "pack_rows"):
            return (f"{call} while the packer is set up to pack rows (pack_rows_init({self.pack_rows})); call "
                    "pack_rows_uninit() first" if self.pack_rows is not None else
                    f"{call} without pack_rows_init(num_rows): call it first (and pack_rows_uninit() after)")
        cb, fmt = self.format_of(cb)
        have, have_cb, by = self.pack
        if fmt != have:
            return (f"{call} into c_{cb} ({_name(fmt)}) while the packer is configured by {by} for "
                    f"{_name(have)} (c_{have_cb}); call pack_reconfig_data_format(c_{cb}) first")
        return None
