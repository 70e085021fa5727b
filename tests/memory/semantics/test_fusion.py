"""The int8 matmul rewrite: what it fuses, what it leaves, and that it keeps the meaning."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime  # type: ignore[import-untyped]
from onnx import TensorProto, helper, numpy_helper

from credence.memory.semantics.fusion import BLOCK, FUSED_DOMAIN, FUSED_OP, fuse_int8_matmuls
from credence.memory.semantics.model import FUSED_MATMULS, minilm_files

RNG = np.random.default_rng(7)
COLUMNS = 4


def weight_only_int8_graph(rows: int = 2 * BLOCK, *, gather_too: bool = False) -> onnx.ModelProto:
    """x @ (float(W_q) * scale) with per-column scales, as the bundled model writes a weight;
    with ``gather_too``, the same dequantised table also feeds a Gather (an embedding lookup)."""
    weight = RNG.integers(-127, 128, size=(rows, COLUMNS), dtype=np.int8)
    scale = RNG.uniform(0.01, 0.05, size=(1, COLUMNS)).astype(np.float32)
    nodes = [
        helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", COLUMNS])]
    if gather_too:
        nodes.append(helper.make_node("Gather", ["w", "index"], ["row"]))
        outputs.append(helper.make_tensor_value_info("row", TensorProto.FLOAT, [COLUMNS]))
    graph = helper.make_graph(
        nodes,
        "weight_only_int8",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", rows])],
        outputs,
        [
            numpy_helper.from_array(weight, "w_q"),
            numpy_helper.from_array(scale, "w_scale"),
            numpy_helper.from_array(np.array(1, dtype=np.int64), "index"),
        ],
    )
    # IR version 8: the onnx package writes a newer one by default than ONNX Runtime 1.28 reads.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(["y"], {"x": x})[0]


def test_a_weight_only_int8_matmul_becomes_one_int8_matmul_with_the_same_result() -> None:
    model = weight_only_int8_graph()
    x = RNG.normal(size=(3, 2 * BLOCK)).astype(np.float32)
    expected = run(model, x)
    assert fuse_int8_matmuls(model) == 1
    assert [(node.op_type, node.domain) for node in model.graph.node] == [(FUSED_OP, FUSED_DOMAIN)]
    assert {tensor.name for tensor in model.graph.initializer} == {"w_q_blocks", "w_q_scales"}
    fused = run(model, x)
    # The activations are quantised to 8 bits per block of each row: close, not equal.
    assert np.abs(fused - expected).max() < 0.02 * np.abs(expected).max()


def test_weights_it_cannot_fuse_are_left_as_they_were() -> None:
    for model in (weight_only_int8_graph(gather_too=True), weight_only_int8_graph(BLOCK + 8)):
        before = model.SerializeToString()
        assert fuse_int8_matmuls(model) == 0
        assert model.SerializeToString() == before


def test_the_bundled_model_fuses_all_its_weight_matmuls_and_keeps_its_tables() -> None:
    weights, _ = minilm_files()
    model = onnx.load_model(str(weights))
    assert fuse_int8_matmuls(model) == FUSED_MATMULS
    ops = [node.op_type for node in model.graph.node]
    assert ops.count(FUSED_OP) == FUSED_MATMULS
    assert ops.count("MatMul") == 48 - FUSED_MATMULS  # attention's q·k and weights·v stay float
    assert ops.count("Gather") == 3  # word, position and token-type tables


def test_the_fused_model_means_what_the_float_one_does() -> None:
    """Sentence vectors of the fused graph against the float graph's, on a real sentence."""
    weights, _ = minilm_files()
    model = onnx.load_model(str(weights))
    fuse_int8_matmuls(model)
    feeds = {
        "input_ids": np.array([[101, 2467, 2448, 1996, 5852, 2077, 12855, 1012, 102]]),
        "attention_mask": np.ones((1, 9), dtype=np.int64),
    }
    float_graph = onnxruntime.InferenceSession(str(weights), providers=["CPUExecutionProvider"])
    int8_graph = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    names = {item.name for item in float_graph.get_inputs()}
    if "token_type_ids" in names:
        feeds["token_type_ids"] = np.zeros((1, 9), dtype=np.int64)
    vectors = [s.run(None, feeds)[0][0].mean(axis=0) for s in (float_graph, int8_graph)]
    a, b = (v / np.linalg.norm(v) for v in vectors)
    assert float(a @ b) > 0.995
