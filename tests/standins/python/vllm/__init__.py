"""vLLM stand-in package (llmgw tests): `python3 -m vllm.entrypoints.openai.api_server`."""
