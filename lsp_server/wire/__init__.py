"""What the faces share on the wire, the standard library only so that a face can use it
before it has loaded anything else.

- method_names.py: the toolhost/* method names;
- json_bytes.py: JSON as bytes (orjson once loaded);
- broken_json.py: the id of a request that cannot be parsed, so its error reaches it;
- private_stdio.py: the client's stdin and stdout, kept for the face that serves them.
"""
