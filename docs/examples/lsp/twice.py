def g(**kw: object) -> None: ...


def call(url: str) -> None:
    return g(url=url)
