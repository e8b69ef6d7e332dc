#!/usr/bin/python3
"""Chain models for the load-time benchmark (bench/chain_load.sh): N nodes in one line.

  make_chain.py N const OUT.onnx   x_i = Add(x_{i-1}, one) from an initializer: constant folding
                                   folds every node (the capture analysis runs per node)
  make_chain.py N relu OUT.onnx    y_i = Relu/Neg of y_{i-1} from the graph input: nothing folds,
                                   the memory planner sees N values
  make_chain.py N identity OUT.onnx y_i = Identity(y_{i-1}): the no-op removal rewires every node

Written with the protobuf classes directly (onnx.helper is slow for a million nodes)."""
import sys
import onnx
from onnx import TensorProto, helper


def main():
    n, kind, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    m = onnx.ModelProto()
    m.ir_version = 8
    m.producer_name = "onyx-chain-bench"
    m.opset_import.add(domain="", version=17)
    g = m.graph
    g.name = f"chain_{kind}_{n}"
    if kind == "const":
        g.initializer.append(helper.make_tensor("x0", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0]))
        g.initializer.append(helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]))
        prev = "x0"
    else:
        g.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]))
        prev = "x"
    for i in range(n):
        node = g.node.add()
        name = "y" if i == n - 1 else f"t{i}"
        if kind == "const":
            node.op_type = "Add"
            node.input.extend([prev, "one"])
        elif kind == "identity":
            node.op_type = "Identity"
            node.input.append(prev)
        else:
            node.op_type = "Relu" if i % 2 == 0 else "Neg"
            node.input.append(prev)
        node.output.append(name)
        node.name = f"n{i}"
        prev = name
    g.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [4] if kind == "const" else [1, 4]))
    with open(out, "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
