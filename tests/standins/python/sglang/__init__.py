"""SGLang stand-in package (llmgw tests): `python3 -m sglang.launch_server`."""
