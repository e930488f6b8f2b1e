{
  "targets": [
    {
      "target_name": "malloc_trim",
      "sources": ["malloc-trim.c"],
      "cflags": ["-O2", "-Wall"]
    }
  ]
}
