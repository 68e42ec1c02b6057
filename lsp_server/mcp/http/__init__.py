"""`toolhost mcp --http 127.0.0.1:PORT`: the SDK's Streamable HTTP transport on loopback.

- http_serve.py: the entry: binds the socket, writes the bearer token file, serves the SDK's
  server (mcp/server.py) with uvicorn;
- http_gate.py: who may talk to it: loopback addresses only, Host and Origin checked, the
  bearer token;
- http_answers.py: the SDK's 400 answers moved to the id of the request they answer.
"""
