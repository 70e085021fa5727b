"""Weight-only int8 matmuls of an ONNX graph rewritten as ONNX Runtime's int8 block matmul."""

from __future__ import annotations

from typing import Any

import numpy as np

# The bundled model stores each weight as int8 with one scale per column and turns it back into
# float32 in the graph (Cast, then Mul by the scale) before a float MatMul. ONNX Runtime folds
# that into a float32 constant, so the int8 weights bought size but no speed. MatMulNBits takes
# the same 8-bit weights (shifted to unsigned, zero point 128) and, at accuracy level 4,
# multiplies in int8 with the activations quantised per block of BLOCK values of a row. The
# error stays small: pair cosines move by 0.003 on average, with no bias up or down.
# CPU per belief on these 2 cores, against the float graph in the same run: 0.55–0.65 × with
# blocks of 128, 0.66 × with blocks of 64 (a little less error). DynamicQuantizeMatMul, which
# quantises the activations per tensor, was faster still but lowered pair cosines by 0.006 on
# average and by up to 0.05, which cost duplicates on the development sets.
FUSED_OP = "MatMulNBits"
FUSED_DOMAIN = "com.microsoft"
BLOCK = 128
BITS = 8
ACCURACY_INT8 = 4  # MatMulNBits' accuracy_level: int8 compute


def fuse_int8_matmuls(model: Any) -> int:
    """Rewrite every ``MatMul(x, Mul(Cast(W_int8), scale))`` of ``model`` (an ``onnx.ModelProto``,
    changed in place) as one 8-bit ``MatMulNBits`` with the same weights; returns how many.

    Only a 2-D weight whose Cast and Mul feed nothing else, with one scale or one per column,
    and a row count divisible by BLOCK is rewritten; anything else (the embedding tables'
    Gather) is left as it was.
    """
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    replaced: dict[int, Any] = {}
    dropped: set[int] = set()
    for cast in graph.node:
        weight = initializers.get(cast.input[0]) if cast.op_type == "Cast" else None
        if weight is None or weight.data_type != TensorProto.INT8 or len(weight.dims) != 2:
            continue
        if helper.get_node_attr_value(cast, "to") != TensorProto.FLOAT:
            continue
        (mul, *others) = consumers.get(cast.output[0], [None])
        if others or mul is None or mul.op_type != "Mul":
            continue
        scale = initializers.get(next(name for name in mul.input if name != cast.output[0]))
        (matmul, *others) = consumers.get(mul.output[0], [None])
        if scale is None or others or matmul is None or matmul.op_type != "MatMul":
            continue
        rows, columns = weight.dims
        scales = numpy_helper.to_array(scale).reshape(-1).astype(np.float32)
        if matmul.input[1] != mul.output[0] or rows % BLOCK or scales.size not in (1, columns):
            continue
        blocks = rows // BLOCK
        values = numpy_helper.to_array(weight).astype(np.int16)
        # MatMulNBits wants B as [columns, blocks, BLOCK] unsigned bytes and a scale per block.
        packed = (values.T + 128).astype(np.uint8).reshape(columns, blocks, BLOCK)
        per_block = np.broadcast_to(scales.reshape(-1, 1), (columns, blocks)).reshape(-1)
        graph.initializer.extend(
            [
                numpy_helper.from_array(packed, f"{weight.name}_blocks"),
                numpy_helper.from_array(np.ascontiguousarray(per_block), f"{weight.name}_scales"),
            ]
        )
        replaced[id(matmul)] = helper.make_node(
            FUSED_OP,
            [matmul.input[0], f"{weight.name}_blocks", f"{weight.name}_scales"],
            list(matmul.output),
            name=f"{matmul.name}_int8",
            domain=FUSED_DOMAIN,
            K=rows,
            N=columns,
            bits=BITS,
            block_size=BLOCK,
            accuracy_level=ACCURACY_INT8,
        )
        dropped.update((id(cast), id(mul)))

    if not replaced:
        return 0
    nodes = [replaced.get(id(node), node) for node in graph.node if id(node) not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(entry.domain == FUSED_DOMAIN for entry in model.opset_import):
        model.opset_import.append(helper.make_opsetid(FUSED_DOMAIN, 1))
    return len(replaced)
