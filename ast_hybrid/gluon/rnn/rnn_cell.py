"""MXNet 1.9.1's recurrent cells (``mxnet.gluon.rnn.rnn_cell``): the cell base classes users subclass
(``RecurrentCell``, ``HybridRecurrentCell``), the three cells, the containers (``SequentialRNNCell``,
``HybridSequentialRNNCell``, ``BidirectionalCell``) and the modifiers (``DropoutCell``, ``ZoneoutCell``,
``ResidualCell``), with MXNet's parameter names, shapes, gate order, ``begin_state``/``unroll`` rules
and ``valid_length`` masking.  The cells are written with ``F`` ops as MXNet writes them, so ``autograd``
records them op by op, and a hybridized cell (or a hybridized block that unrolls one) is one program.

LSTM gates (rows of ``i2h_weight``): input, forget, cell candidate, output.
GRU gates: reset, update, candidate (the candidate uses ``reset * h2h``).

    >>> from ast_hybrid.gluon import rnn
    >>> c = rnn.LSTMCell(8, input_size=3, prefix='l_')
    >>> [(k, v.shape) for k, v in c.collect_params().items()][:2]
    [('l_i2h_weight', (32, 3)), ('l_h2h_weight', (32, 8))]
    >>> stack = rnn.HybridSequentialRNNCell()
    >>> stack.add(rnn.GRUCell(4, input_size=3)); stack.add(rnn.DropoutCell(0.5)); stack.add(rnn.GRUCell(4))
    >>> [s['shape'] for s in stack.state_info(2)]
    [(2, 4), (2, 4)]
"""

from __future__ import annotations

from ast_hybrid.core.trace import FRAMES
from ast_hybrid.gluon.block import Block, HybridBlock, indent
from ast_hybrid.ops._core import raw
from ast_hybrid.gluon.rnn.sequence import (_format_sequence, _get_begin_state, _is_tensor,
                                           _mask_sequence_variable_length, _reverse_sequences)

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "HybridSequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell"]

_MODIFIED = ("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called directly. "
             "Call the modifier cell instead.")


def _nd():
    from ast_hybrid import nd

    return nd


def _cells_state_info(cells, batch_size):
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


class RecurrentCell(Block):
    """Base class of recurrent cells: ``cell(inputs, states) -> (output, new_states)`` for one step;
    ``unroll`` runs a whole sequence.  Subclasses define ``state_info`` and ``forward`` (or, for
    ``HybridRecurrentCell``, ``hybrid_forward(F, inputs, states, **params)``)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset before re-using the cell for another graph (MXNet: step counters; modifiers: masks)."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            if isinstance(cell, RecurrentCell):     # an activation block is a child too (MXNet fails there)
                cell.reset()

    def state_info(self, batch_size=0):
        """Shape and layout of each state: a list of dicts."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """Initial states, one per ``state_info`` entry, made by ``func(name=..., shape=..., **kwargs)``
        (``nd.zeros`` by default; ``nd.random.uniform`` with ``low``/``high`` works too)."""
        assert not self._modified, _MODIFIED
        func = func or _nd().zeros
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {}, **kwargs)
            info.pop("__layout__", None)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        """Run ``length`` steps over ``inputs`` (an array with a ``T`` axis as in ``layout``, or a list of
        steps): ``(outputs, states)``.  ``merge_outputs`` None keeps the inputs' form.  With
        ``valid_length`` (batch,) the outputs past each length are 0 and the states are those of each
        sequence's last valid step."""
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, F, begin_state, batch_size)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*ele_list, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0) for ele_list in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        """``activation`` as MXNet's cells apply it: a name, a ``LeakyReLU`` block, or any callable."""
        from ast_hybrid.gluon.nn import LeakyReLU

        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid, "softsign": F.softsign}.get(activation) \
            if isinstance(activation, str) else None
        if func:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs)

    def __call__(self, inputs, states):
        self._counter += 1
        return super().__call__(inputs, states)

    def forward(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell written as ``hybrid_forward(F, inputs, states, **params)``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward()")


class _GatedCell(HybridRecurrentCell):
    """The parameters the three cells share: ``i2h``/``h2h`` weights and biases for ``gates`` gates."""

    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size, self._input_size = hidden_size, input_size
        g = self._gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, input_size), init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, hidden_size), init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        n = 2 if self._gates == 4 else 1
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"} for _ in range(n)]

    def infer_shape(self, x, *args):
        self.i2h_weight.shape = (self._gates * self._hidden_size, int(raw(x).shape[-1]))

    def _projections(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """The two FullyConnected ops, and the step's name prefix (``t0_``: MXNet's node names)."""
        n = self._gates * self._hidden_size
        prefix = f"t{self._counter}_"
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n, name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n, name=prefix + "h2h")
        return i2h, h2h, prefix

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]})"


class RNNCell(_GatedCell):
    """``h' = activation(i2h(x) + h2h(h))``."""

    _gates = 1

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None,
                 params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self):
        return "rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h, t = self._projections(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, name=t + "plus0"), self._activation, name=t + "out")
        return output, [output]

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"RNNCell({shape[1] if shape[1] else None} -> {shape[0]}, {self._activation})"


class LSTMCell(_GatedCell):
    """Gates input, forget, cell, output (MXNet's order); ``c' = f * c + i * g``, ``h' = o * act(c')``."""

    _gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None,
                 params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params)
        self._activation, self._recurrent_activation = activation, recurrent_activation

    def _alias(self):
        return "lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h, t = self._projections(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        gi, gf, gc, go = F.SliceChannel(F.elemwise_add(i2h, h2h, name=t + "plus0"), num_outputs=4, name=t + "slice")
        rec = self._recurrent_activation
        in_gate = self._get_activation(F, gi, rec, name=t + "i")
        forget_gate = self._get_activation(F, gf, rec, name=t + "f")
        in_transform = self._get_activation(F, gc, self._activation, name=t + "c")
        out_gate = self._get_activation(F, go, rec, name=t + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=t + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=t + "mul1"), name=t + "state")
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=self._activation, name=t + "activation0"),
                                name=t + "out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """Gates reset, update, new; the new gate uses ``reset * h2h``; ``h' = (1 - z) * n + z * h``.
    (``activation``/``recurrent_activation`` are MXNet 2's; MXNet 1.9.1 fixes tanh and sigmoid.)"""

    _gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None,
                 params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params)
        self._activation, self._recurrent_activation = activation, recurrent_activation

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h, t = self._projections(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, name=t + "i2h_slice")
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, name=t + "h2h_slice")
        rec = self._recurrent_activation
        reset = self._get_activation(F, F.elemwise_add(i2h_r, h2h_r, name=t + "plus0"), rec, name=t + "r_act")
        update = self._get_activation(F, F.elemwise_add(i2h_z, h2h_z, name=t + "plus1"), rec, name=t + "z_act")
        new = self._get_activation(F, F.elemwise_add(i2h_n, F.elemwise_mul(reset, h2h_n, name=t + "mul0"),
                                                     name=t + "plus2"), self._activation, name=t + "h_act")
        ones = F.ones_like(update, name=t + "ones_like0")
        out = F.elemwise_add(F.elemwise_mul(F.elemwise_sub(ones, update, name=t + "minus0"), new, name=t + "mul1"),
                             F.elemwise_mul(update, states[0], name=t + "mul20"), name=t + "out")
        return out, [out]


class _Stack:
    """What ``SequentialRNNCell`` and ``HybridSequentialRNNCell`` share: cells run one after the other,
    each taking its slice of the states."""

    def __repr__(self):
        body = "\n".join(f"({i}): {indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    def add(self, cell):
        """Append a cell to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        assert not self._modified, _MODIFIED
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs, states):
        self._counter += 1
        assert not any(isinstance(c, BidirectionalCell) for c in self._children.values()), \
            "BidirectionalCell cannot be stepped; use unroll"
        next_states, p = [], 0
        for cell in self._children.values():
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, F, begin_state, batch_size)
        p, next_states = 0, []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < num_cells - 1 else merge_outputs,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_Stack, RecurrentCell):
    """Stacks recurrent cells (any, hybrid or not)."""

    _bidirectional = False


class HybridSequentialRNNCell(_Stack, HybridRecurrentCell):
    """Stacks hybrid recurrent cells; stepping it steps each cell (each compiled if hybridized)."""

    _bidirectional = False

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs of a step (``axes``: the axes sharing one mask); no states of its own."""

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        assert isinstance(rate, (int, float)), "rate must be a number"
        self._rate, self._axes = rate, axes

    def __repr__(self):
        return f"DropoutCell(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes, name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if _is_tensor(inputs):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base class of cells that wrap another (``base_cell``) and change its step; shares its parameters.
    Once wrapped, the base cell is used through the modifier only."""

    def __init__(self, base_cell):
        assert not base_cell._modified, \
            f"Cell {base_cell.name} is already modified. One cell cannot be modified twice"
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=None, **kwargs):
        assert not self._modified, _MODIFIED
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward()")

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell!r})"


class _Carried:
    """A value a cell keeps from one step to the next (ZoneoutCell's previous output, VariationalDropoutCell's
    masks).  It lives on the cell, or, while a hybridized program is traced, on that trace: no tracer
    outlives its trace, and each trace starts from the initial value, as MXNet's cached graph does."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, cell, owner=None):
        return self if cell is None else _carried(cell).get(self.name)

    def __set__(self, cell, value):
        _carried(cell)[self.name] = value


def _carried(cell):
    if FRAMES.traces:
        return FRAMES.traces[-1].carried.setdefault(id(cell), {})
    return cell.__dict__.setdefault("_carried_values", {})


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016): in training, each output and state unit keeps its previous value
    with probability ``zoneout_outputs`` / ``zoneout_states``."""

    _prev_output = _Carried()

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0):
        assert not isinstance(base_cell, BidirectionalCell), \
            "BidirectionalCell doesn't support zoneout since it doesn't support step. " \
            "Please add ZoneoutCell to the cells underneath instead."
        assert not isinstance(base_cell, SequentialRNNCell) or not base_cell._bidirectional, \
            "Bidirectional SequentialRNNCell doesn't support zoneout. " \
            "Please add ZoneoutCell to the cells underneath instead."
        super().__init__(base_cell)
        self.zoneout_outputs, self.zoneout_states = zoneout_outputs, zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = F.where(mask(p_outputs, next_output), next_output, prev_output) if p_outputs != 0.0 \
            else next_output
        if p_states != 0.0:
            states = [F.where(mask(p_states, new_s), new_s, old_s) for new_s, old_s in zip(next_states, states)]
        else:
            states = next_states
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the step's input to the base cell's output (Wu et al., 2016)."""

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs, valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        merge_outputs = _is_tensor(outputs) if merge_outputs is None else merge_outputs
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and concatenates their outputs
    (``unroll`` only: it cannot be stepped)."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        return f"BidirectionalCell(forward={self._children['l_cell']!r}, backward={self._children['r_cell']!r})"

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        assert not self._modified, _MODIFIED
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(F, inputs, length, valid_length))
        states = _get_begin_state(self, F, begin_state, batch_size)
        l_cell, r_cell = self._children.values()
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l], layout=layout,
                                            merge_outputs=merge_outputs, valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs, begin_state=states[n_l:],
                                            layout=layout, merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(F, r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = _is_tensor(l_outputs)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = _format_sequence(None, reversed_r_outputs, layout, merge_outputs)
        if merge_outputs:
            if not _is_tensor(reversed_r_outputs):
                reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2, name=f"{self._output_prefix}out")
        else:
            outputs = [F.concat(lo, ro, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (lo, ro) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states
