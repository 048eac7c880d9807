"""From a trained model (PyTorch, ONNX) to a typed layer graph the hardware planner reads."""
