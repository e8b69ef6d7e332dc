"""ONNX Runtime's documented PyTorch flow, unchanged except for the import:
export a Linear-ReLU-Linear-ReLU-Linear classifier with torch.onnx.export,
run it with onyx, compare the predictions with PyTorch's.

    python examples/pytorch_classifier.py [model.onnx]
"""
import sys
import tempfile
import os

import numpy as np
import torch

import onyx as ort  # was: import onnxruntime as ort


class Classifier(torch.nn.Module):
    def __init__(self, features=20, hidden=64, classes=5):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(features, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


def main(path=None):
    torch.manual_seed(0)
    model = Classifier().eval()
    batch = torch.randn(256, 20)
    path = path or os.path.join(tempfile.mkdtemp(), "classifier.onnx")
    torch.onnx.export(model, batch[:1], path, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})

    sess_options = ort.SessionOptions()
    sess_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(path, sess_options,
                                   providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    print("providers:", session.get_providers())
    input_name = session.get_inputs()[0].name
    output_name = session.get_outputs()[0].name
    logits = session.run([output_name], {input_name: batch.numpy()})[0]
    predictions = np.argmax(logits, axis=1)

    with torch.no_grad():
        expected = model(batch).argmax(dim=1).numpy()
    same = int((predictions == expected).sum())
    print(f"predictions equal to PyTorch's: {same}/{len(expected)}")
    print("max |logit difference|:", float(np.abs(logits - model(batch).detach().numpy()).max()))
    return same == len(expected)


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1] if len(sys.argv) > 1 else None) else 1)
