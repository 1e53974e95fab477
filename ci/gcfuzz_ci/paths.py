"""Where the tree is: ci/gcfuzz_ci/ is two levels below its root."""
import os

CI = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(CI)
