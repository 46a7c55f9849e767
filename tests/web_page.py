"""A stand-in for the page a web canvas (matplotlib's webagg, ipympl) talks to, for the tests."""


class PageSocket:
    """What a web canvas sends to a page: JSON events and pictures."""

    def __init__(self):
        self.events, self.pictures = [], []

    def send_json(self, content):
        self.events.append(content)

    def send_binary(self, blob):
        self.pictures.append(blob)
