"""``mxnet.gluon.contrib.rnn.rnn_cell``: ``LSTMPCell`` (an LSTM whose hidden state is projected, as GluonNLP's
big language models use it), ``VariationalDropoutCell`` (one dropout mask per sequence, Gal and
Ghahramani 2016) and ``dynamic_unroll`` (a cell over a sequence as one loop, ``F.contrib.foreach``).

    >>> from ast_hybrid.gluon.contrib import rnn
    >>> c = rnn.LSTMPCell(8, 3, input_size=5, prefix='p_')
    >>> [(k, v.shape) for k, v in c.collect_params().items()]
    [('p_i2h_weight', (32, 5)), ('p_h2h_weight', (32, 3)), ('p_h2r_weight', (3, 8)), ('p_i2h_bias', (32,)), \
('p_h2h_bias', (32,))]
"""

from __future__ import annotations

from ast_hybrid.gluon.rnn.rnn_cell import (BidirectionalCell, HybridRecurrentCell, ModifierCell, SequentialRNNCell,
                                           _Carried)
from ast_hybrid.gluon.rnn.sequence import (_format_sequence, _get_begin_state, _is_tensor,
                                           _mask_sequence_variable_length)
from ast_hybrid.ops._core import raw

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


class VariationalDropoutCell(ModifierCell):
    """Dropout on a cell's inputs, states and outputs with ONE mask per sequence (drawn at the first step,
    kept until ``reset``/the next ``unroll``)."""

    drop_inputs_mask, drop_states_mask, drop_outputs_mask = _Carried(), _Carried(), _Carried()

    def __init__(self, base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0):
        assert not drop_states or not isinstance(base_cell, BidirectionalCell), \
            "BidirectionalCell doesn't support variational state dropout. " \
            "Please add VariationalDropoutCell to the cells underneath instead."
        assert not drop_states or not isinstance(base_cell, SequentialRNNCell) or not base_cell._bidirectional, \
            "Bidirectional SequentialRNNCell doesn't support variational state dropout. " \
            "Please add VariationalDropoutCell to the cells underneath instead."
        super().__init__(base_cell)
        self.drop_inputs, self.drop_states, self.drop_outputs = drop_inputs, drop_states, drop_outputs
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def _mask(self, F, name, p, like):
        """The kept mask ``name`` (one per sequence), drawn now if there is none yet in this trace."""
        mask = getattr(self, name)
        if mask is None:
            mask = F.Dropout(F.ones_like(like), p=p)
            setattr(self, name, mask)
        return mask

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self._mask(F, "drop_states_mask", self.drop_states, states[0])
        if self.drop_inputs:
            inputs = inputs * self._mask(F, "drop_inputs_mask", self.drop_inputs, inputs)
        next_output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs:
            next_output = next_output * self._mask(F, "drop_outputs_mask", self.drop_outputs, next_output)
        return next_output, next_states

    def __repr__(self):
        return f"VariationalDropoutCell(p_out = {self.drop_outputs}, p_state = {self.drop_states})"

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        """Without state dropout the whole sequence is masked at once (a mask shared along the time axis)
        around the base cell's own ``unroll``; with it, step by step."""
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs, valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout, merge_outputs=True,
                                                valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        merge_outputs = _is_tensor(outputs) if merge_outputs is None else merge_outputs
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    """LSTM with a projected hidden state (Sak et al., 2014): ``r = h2r(o * tanh(c))`` of
    ``projection_size`` is the output and the recurrent input; states ``[r, c]``."""

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 h2r_weight_initializer=None, i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 input_size=0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size, self._input_size, self._projection_size = hidden_size, input_size, projection_size
        g = 4 * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, input_size), init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, projection_size), init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def infer_shape(self, x, *args):
        self.i2h_weight.shape = (4 * self._hidden_size, int(raw(x).shape[-1]))

    def __repr__(self):
        shape, proj = self.i2h_weight.shape, self.h2r_weight.shape
        return f"LSTMPCell({shape[1] if shape[1] else None} -> {shape[0]} -> {proj[0]})"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias, h2h_bias):
        n = self._hidden_size * 4
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n)
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n)
        gi, gf, gc, go = F.SliceChannel(i2h + h2h, num_outputs=4)
        in_gate = F.Activation(gi, act_type="sigmoid")
        forget_gate = F.Activation(gf, act_type="sigmoid")
        in_transform = F.Activation(gc, act_type="tanh")
        out_gate = F.Activation(go, act_type="sigmoid")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform)
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"))
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size, weight=h2r_weight, no_bias=True)
        return next_r, [next_r, next_c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC", valid_length=None):
    """Run ``cell`` over ``inputs`` as one loop (``F.contrib.foreach``: one ``lax.scan`` when compiled):
    ``(outputs, states)``; with ``valid_length`` the states stop at each sequence's last valid step and
    the outputs past it are 0 (MXNet's contrib ``dynamic_unroll``)."""
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)
    axes = list(range(len(layout)))
    if axis != 0:
        axes[0], axes[axis] = axes[axis], axes[0]
        inputs = F.transpose(inputs, axes=axes)
    states = begin_state
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    if valid_length is None:
        def loop_body(inputs, states):
            return cell(inputs, states)
    else:
        states = list(states) + [F.zeros((1,))]

        def loop_body(inputs, states):
            cell_states, iter_no = states[:-1], states[-1]
            out, new_states = cell(inputs, cell_states)
            new_states = [F.where(F.broadcast_greater(valid_length, iter_no), new, old)
                          for new, old in zip(new_states, cell_states)]
            return out, new_states + [iter_no + 1]
    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if axis != 0:
        outputs = F.transpose(outputs, axes)
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length, use_sequence_length=True, axis=axis)
        return outputs, states[:-1]
    return outputs, states
