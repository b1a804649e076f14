"""MXNet 1.9.1's legacy symbolic RNN cells (``mx.rnn``, ``python/mxnet/rnn/rnn_cell.py``): cells that build a
Symbol graph step by step (``cell(inputs, states)``) or over a sequence (``unroll``), for ``mx.mod.Module``.

- ``RNNCell``, ``LSTMCell``, ``GRUCell``: one ``FullyConnected`` per input and state, MXNet's gate order and
  node names (``{prefix}t{step}_i2h``...), their weights ``{prefix}i2h_weight``... shared by all steps;
- ``FusedRNNCell``: the fused ``RNN`` op over the whole sequence, its weights one vector ``{prefix}parameters``
  (``init.FusedRNN``); ``unpack_weights``/``pack_weights`` turn that vector into the per-gate arrays the
  unfused cells' ``unpack_weights`` give, and back, so a fused and an unfused stack share trained weights;
  ``unfuse()`` the equivalent stack;
- ``SequentialRNNCell``, ``BidirectionalCell``, and the modifiers ``DropoutCell``, ``ZoneoutCell``,
  ``ResidualCell``; ``ConvRNNCell``/``ConvLSTMCell``/``ConvGRUCell``;
- ``RNNParams``: the variables a cell shares with others.

States begin as ``sym.zeros(shape=(0, H))``: the 0 is the batch size, inferred from the data when bound.

Over 600 lines: MXNet's ``rnn_cell.py`` (1436 lines) as one module, its cell families side by side as MXNet
reads them (the fused cell unfuses into the others, the modifiers wrap them).
"""

from __future__ import annotations

import functools
import warnings

from ast_hybrid import init, nd, sym as symbol
from ast_hybrid.ops.rnn import GATE_NAMES, GATES, param_layout

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell", "BaseConvRNNCell",
           "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """``inputs`` as one Symbol (``merge``) or a list of ``length`` steps, and the layout's time axis."""
    assert inputs is not None, \
        "unroll(inputs=None) has been deprecated. Please create input variables outside unroll."
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            assert len(inputs.list_outputs()) == 1, \
                "unroll doesn't allow grouped symbol as input. Please convert to list with list(inputs) " \
                "first or let unroll handle splitting."
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    else:
        assert length is None or len(inputs) == length
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(i, axis=axis) for i in inputs], dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """The variables of one or more cells, by name (``prefix`` + name), made on first ``get``."""

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """MXNet's abstract cell: ``__call__(inputs, states)`` is one step, ``unroll`` a sequence."""

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError()

    @property
    def params(self):
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        raise NotImplementedError()

    @property
    def state_shape(self):
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The first step's states: ``func(name='{prefix}begin_state_{i}', shape=..., __layout__=...)``."""
        assert not self._modified, \
            "After applying modifier cells (e.g. DropoutCell) the base cell cannot be called directly. " \
            "Call the modifier cell instead."
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name="%sbegin_state_%d" % (self._prefix, self._init_counter), **kwargs))
        return states

    def unpack_weights(self, args):
        """``args`` (name -> NDArray) with this cell's ``i2h``/``h2h`` weights and biases split per gate."""
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop("%s%s_weight" % (self._prefix, group))
            bias = args.pop("%s%s_bias" % (self._prefix, group))
            for j, gate in enumerate(self._gate_names):
                args["%s%s%s_weight" % (self._prefix, group, gate)] = weight[j * h:(j + 1) * h].copy()
                args["%s%s%s_bias" % (self._prefix, group, gate)] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The reverse of :meth:`unpack_weights`."""
        args = args.copy()
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            weight = [args.pop("%s%s%s_weight" % (self._prefix, group, gate)) for gate in self._gate_names]
            bias = [args.pop("%s%s%s_bias" % (self._prefix, group, gate)) for gate in self._gate_names]
            args["%s%s_weight" % (self._prefix, group)] = nd.concatenate(weight)
            args["%s%s_bias" % (self._prefix, group)] = nd.concatenate(bias)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """``length`` steps over ``inputs`` (a Symbol in ``layout`` or a list of steps): ``(outputs, states)``,
        the outputs one Symbol if ``merge_outputs`` else a list."""
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _next_step(self):
        """The next step's node-name prefix (``{prefix}t{step}_``)."""
        self._counter += 1
        return "%st%d_" % (self._prefix, self._counter)

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


def _lstm_step(cell, gates, prev_c, name, activation, slicing):
    """An LSTM step from its summed gates (input, forget, cell, output): ``(h, [h, c])``, MXNet's node names."""
    gates = symbol.SliceChannel(gates, num_outputs=4, name="%sslice" % name, **slicing)
    in_gate = symbol.Activation(gates[0], act_type="sigmoid", name="%si" % name)
    forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name="%sf" % name)
    in_transform = cell._get_activation(gates[2], activation, name="%sc" % name)
    out_gate = symbol.Activation(gates[3], act_type="sigmoid", name="%so" % name)
    next_c = symbol._internal._plus(forget_gate * prev_c, in_gate * in_transform, name="%sstate" % name)
    next_h = symbol._internal._mul(out_gate, cell._get_activation(next_c, activation), name="%sout" % name)
    return next_h, [next_h, next_c]


def _gru_step(cell, i2h, h2h, prev_h, name, activation):
    """A GRU step from its two projections (reset, update, new gates each): ``(h, [h])``."""
    i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
    h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
    reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name="%s_r_act" % name)
    update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name="%s_z_act" % name)
    next_h_tmp = cell._get_activation(i2h + reset_gate * h2h, activation, name="%s_h_act" % name)
    next_h = symbol._internal._plus((1. - update_gate) * next_h_tmp, update_gate * prev_h, name="%sout" % name)
    return next_h, [next_h]


class _DenseCell(BaseRNNCell):
    """A cell whose gates are ``i2h(x) + h2h(h)`` (two ``FullyConnected``, the gates' rows stacked in MXNet's
    order, their weights ``{prefix}i2h_weight``...), ``mode``'s gates and states (``ops.rnn.GATE_NAMES``)."""

    _mode = "rnn_tanh"

    def __init__(self, num_hidden, prefix, params, i2h_bias_init=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias", **({} if i2h_bias_init is None else {"init": i2h_bias_init}))
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"} for _ in range(1 + (self._mode == "lstm"))]

    @property
    def _gate_names(self):
        return list(GATE_NAMES[self._mode])

    def _projections(self, inputs, state, i2h_name, h2h_name):
        size = self._num_hidden * GATES[self._mode]
        return (symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=size, name=i2h_name),
                symbol.FullyConnected(data=state, weight=self._hW, bias=self._hB, num_hidden=size, name=h2h_name))


class RNNCell(_DenseCell):
    """``activation(i2h(x) + h2h(h))``."""

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h, h2h = self._projections(inputs, states[0], "%si2h" % name, "%sh2h" % name)
        output = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return output, [output]


class LSTMCell(_DenseCell):
    """LSTM: gates input, forget, cell, output; ``forget_bias`` added to the forget gate's ``i2h`` bias."""

    _mode = "lstm"

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(num_hidden, prefix, params, i2h_bias_init=init.LSTMBias(forget_bias=forget_bias))

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h, h2h = self._projections(inputs, states[0], "%si2h" % name, "%sh2h" % name)
        return _lstm_step(self, i2h + h2h, states[1], name, "tanh", {})


class GRUCell(_DenseCell):
    """GRU as cuDNN has it (gates reset, update, new; the new gate uses ``reset * h2h``)."""

    _mode = "gru"

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(num_hidden, prefix, params)

    def __call__(self, inputs, states):
        name = self._next_step()
        prev_h = states[0]
        i2h, h2h = self._projections(inputs, prev_h, "%s_i2h" % name, "%s_h2h" % name)
        return _gru_step(self, i2h, h2h, prev_h, name, "tanh")


class FusedRNNCell(BaseRNNCell):
    """The fused ``RNN`` op over a whole sequence (``mode`` rnn_relu, rnn_tanh, lstm, gru); its weights are one
    vector ``{prefix}parameters``.  It cannot be stepped: ``unroll`` it, or ``unfuse()`` it."""

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False, dropout=0.,
                 get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if prefix is None:
            prefix = "%s_" % mode
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        initializer = init.FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)

    @property
    def state_info(self):
        b = self._bidirectional + 1
        n = (self._mode == "lstm") + 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"} for _ in range(n)]

    @property
    def _gate_names(self):
        return list(GATE_NAMES[self._mode])

    @property
    def _num_gates(self):
        return GATES[self._mode]

    def _slice_weights(self, arr, li, lh):
        """Views of ``arr`` (the flat vector) by MXNet's per-gate names, for an input of ``li`` features."""
        args, end = {}, 0
        for name, offset, shape in param_layout(self._mode, self._num_layers, self._bidirectional, li, lh):
            end = offset + shape[0] * (shape[1] if len(shape) > 1 else 1)
            args[self._prefix + name] = arr[offset:end].reshape(shape)
        assert end == arr.size, "Invalid parameters size for FusedRNNCell"
        return args

    def unpack_weights(self, args):
        args = args.copy()
        arr = args.pop(self._parameter.name)
        b, m, h = len(self._directions), self._num_gates, self._num_hidden
        num_input = arr.size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        args.update({name: piece.copy() for name, piece in self._slice_weights(arr, num_input, h).items()})
        return args

    def pack_weights(self, args):
        args = args.copy()
        w0 = args["%sl0_i2h%s_weight" % (self._prefix, self._gate_names[0])]
        num_input = w0.shape[1]
        pieces = [args.pop(self._prefix + name).reshape((-1,))
                  for name, _, _ in param_layout(self._mode, self._num_layers, self._bidirectional, num_input,
                                                 self._num_hidden)]
        args[self._parameter.name] = nd.concatenate(pieces).as_in_context(w0.context).astype(w0.dtype)
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for faster speed")
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        else:
            assert axis == 0, "Unsupported layout %s" % layout
        if begin_state is None:
            begin_state = self.begin_state()
        states = {"state": begin_state[0]}
        if self._mode == "lstm":
            states["state_cell"] = begin_state[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode, name=self._prefix + "rnn", **states)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n = 2 if self._mode == "lstm" else 1
            for i in range(1, n + 1):
                rnn[i]._set_attr(__layout__="LNC")
            outputs, states = rnn[0], [rnn[i] for i in range(1, n + 1)]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The equivalent stack of unfused cells (``SequentialRNNCell``), sharing this cell's weight names."""
        stack = SequentialRNNCell()
        make = {"rnn_relu": lambda p: RNNCell(self._num_hidden, activation="relu", prefix=p),
                "rnn_tanh": lambda p: RNNCell(self._num_hidden, activation="tanh", prefix=p),
                "lstm": lambda p: LSTMCell(self._num_hidden, prefix=p),
                "gru": lambda p: GRUCell(self._num_hidden, prefix=p)}[self._mode]
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make("%sl%d_" % (self._prefix, i)), make("%sr%d_" % (self._prefix, i)),
                                            output_prefix="%sbi_l%d_" % (self._prefix, i)))
            else:
                stack.add(make("%sl%d_" % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix="%s_dropout%d_" % (self._prefix, i)))
        return stack


class _CellGroup(BaseRNNCell):
    """Cells made of cells (``_cells``): their states, begin states and weights one after the other."""

    def _adopt(self, cell, who):
        if self._override_cell_params:
            assert cell._own_params, f"Either specify params for {who} or child cells, not both."
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return sum([c.state_info for c in self._cells], [])

    def begin_state(self, **kwargs):
        assert not self._modified, \
            "After applying modifier cells (e.g. DropoutCell) the base cell cannot be called directly. " \
            "Call the modifier cell instead."
        return sum([c.begin_state(**kwargs) for c in self._cells], [])

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args


class SequentialRNNCell(_CellGroup):
    """Cells stacked: each one's output is the next one's input."""

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        self._cells.append(cell)
        self._adopt(cell, "SequentialRNNCell")

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            assert not isinstance(cell, BidirectionalCell)
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states = []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n], layout=layout,
                                         merge_outputs=None if i < len(self._cells) - 1 else merge_outputs)
            p += n
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the input (no state)."""

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        assert isinstance(dropout, (int, float)), "dropout probability must be a number"
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """A cell that modifies ``base_cell`` (which is then called only through it)."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        assert not self._modified, \
            "After applying modifier cells (e.g. DropoutCell) the base cell cannot be called directly. " \
            "Call the modifier cell instead."
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(init_sym, **kwargs)
        self.base_cell._modified = True
        return begin

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError


class ZoneoutCell(ModifierCell):
    """Zoneout: in training, each output/state unit keeps its previous value with probability
    ``zoneout_outputs``/``zoneout_states``."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        assert not isinstance(base_cell, FusedRNNCell), \
            "FusedRNNCell doesn't support zoneout. Please unfuse first."
        assert not isinstance(base_cell, BidirectionalCell), \
            "BidirectionalCell doesn't support zoneout since it doesn't support step. " \
            "Please add ZoneoutCell to the cells underneath instead."
        assert not isinstance(base_cell, SequentialRNNCell) or not getattr(base_cell, "_bidirectional", False), \
            "Bidirectional SequentialRNNCell doesn't support zoneout. " \
            "Please add ZoneoutCell to the cells underneath instead."
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev_output = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = (symbol.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([symbol.where(mask(p_states, new_s), new_s, old_s) for new_s, old_s in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """The base cell's output plus its input (Wu et al., 2016)."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name="%s_plus_residual" % output.name)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                merge_outputs=merge_outputs)
        self.base_cell._modified = True
        merge_outputs = isinstance(outputs, symbol.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs, name="%s_plus_residual" % outputs.name)
        else:
            outputs = [symbol.elemwise_add(o, i, name="%s_plus_residual" % o.name) for o, i in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(_CellGroup):
    """``l_cell`` forward and ``r_cell`` backward in time, their outputs concatenated per step."""

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        self._cells = [l_cell, r_cell]
        for cell in self._cells:
            self._adopt(cell, "BidirectionalCell")

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=begin_state[:n_left], layout=layout,
                                            merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)), begin_state=begin_state[n_left:],
                                            layout=layout, merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, symbol.Symbol) and isinstance(r_outputs, symbol.Symbol)
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis, num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis, num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(l_o, r_o, dim=1 + merge_outputs,
                                 name=("%sout" % self._output_prefix if merge_outputs
                                       else "%st%d" % (self._output_prefix, i)))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, [l_states, r_states]


class BaseConvRNNCell(BaseRNNCell):
    """Convolutional cells' base: ``i2h`` and ``h2h`` are convolutions; the state's shape is inferred from
    ``input_shape`` (one step's input, batch first)."""

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad,
                 i2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, activation, prefix="", params=None, conv_layout="NCHW"):
        super().__init__(prefix=prefix, params=params)
        self._h2h_kernel = h2h_kernel
        assert (h2h_kernel[0] % 2 == 1) and (h2h_kernel[1] % 2 == 1), \
            "Only support odd number, get h2h_kernel= %s" % str(h2h_kernel)
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2, h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        data = symbol.Variable("data")
        state = symbol.Convolution(data=data, num_filter=num_hidden, kernel=i2h_kernel, stride=i2h_stride,
                                   pad=i2h_pad, dilate=i2h_dilate, layout=conv_layout)
        self._state_shape = (0,) + tuple(state.infer_shape(data=input_shape)[1][0][1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    _mode = "rnn_tanh"        # (the gates and states of: GATE_NAMES)

    @property
    def _gate_names(self):
        return list(GATE_NAMES[self._mode])

    @property
    def _num_gates(self):
        return GATES[self._mode]

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}
                for _ in range(1 + (self._mode == "lstm"))]

    def _conv_forward(self, inputs, states, name):
        i2h = symbol.Convolution(name="%si2h" % name, data=inputs, num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride, pad=self._i2h_pad,
                                 dilate=self._i2h_dilate, weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name="%sh2h" % name, data=states[0],
                                 num_filter=self._num_hidden * self._num_gates, kernel=self._h2h_kernel,
                                 dilate=self._h2h_dilate, pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")


_LEAKY = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


def _conv_defaults(prefix):
    """The keyword defaults MXNet's three convolutional cells share (``prefix`` differs)."""
    def decorate(cls):
        def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1), i2h_kernel=(3, 3),
                     i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1), i2h_weight_initializer=None,
                     h2h_weight_initializer=None, i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                     activation=_LEAKY, prefix=prefix, params=None, conv_layout="NCHW"):
            BaseConvRNNCell.__init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                                     i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                                     i2h_bias_initializer, h2h_bias_initializer, activation, prefix=prefix,
                                     params=params, conv_layout=conv_layout)
        cls.__init__ = __init__
        return cls
    return decorate


@_conv_defaults("ConvRNN_")
class ConvRNNCell(BaseConvRNNCell):
    """``activation(conv_i2h(x) + conv_h2h(h))``."""

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return output, [output]


@_conv_defaults("ConvLSTM_")
class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM (Xingjian et al., NIPS 2015)."""

    _mode = "lstm"

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        return _lstm_step(self, i2h + h2h, states[1], name, self._activation, {"axis": self._conv_layout.find("C")})


@_conv_defaults("ConvGRU_")
class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU."""

    _mode = "gru"

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        return _gru_step(self, i2h, h2h, states[0], name, self._activation)
