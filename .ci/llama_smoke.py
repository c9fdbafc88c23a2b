"""Exit 0 when llama-cpp-python can evaluate a multi-token prompt with the embedded
model. Runs the check in a child process, since the failure is a segfault."""

import subprocess
import sys

CHECK = """
import llama_cpp
from wikic.backends.llama_path import embedded_model_path
llm = llama_cpp.Llama(model_path=str(embedded_model_path()), n_ctx=512, verbose=False)
out = llm.create_completion("<|im_start|>user\\nSay hi<|im_end|>\\n<|im_start|>assistant\\n", max_tokens=4)
assert out["usage"]["prompt_tokens"] > 1
"""

result = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True)
if result.returncode != 0:
    print(f"llama smoke test failed (exit {result.returncode}): {result.stderr[-400:]}", file=sys.stderr)
sys.exit(result.returncode)
