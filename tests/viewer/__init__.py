import html.parser
from typing import Dict, List, NamedTuple, Optional


class Element(NamedTuple):
    tag: str
    attributes: Dict[str, Optional[str]]
    ancestors: List["Element"]

    @property
    def classes(self) -> List[str]:
        return (self.attributes.get("class") or "").split()

    def within(self, tag: str, class_name: str) -> Optional["Element"]:
        """The nearest ancestor `tag` with the class `class_name`."""
        for ancestor in reversed(self.ancestors):
            if ancestor.tag == tag and class_name in ancestor.classes:
                return ancestor
        return None


class _Collector(html.parser.HTMLParser):
    VOID = {"meta", "input", "br", "img", "link"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: List[Element] = []
        self.stack: List[Element] = []

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), list(self.stack))
        self.elements.append(element)
        if tag not in self.VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag, attrs):
        self.elements.append(Element(tag, dict(attrs), list(self.stack)))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop().tag == tag:
                break


def page_elements(text: str) -> List[Element]:
    """Every element of an HTML page, with its ancestors."""
    collector = _Collector()
    collector.feed(text)
    collector.close()
    return collector.elements


def select(elements: List[Element], tag: str, class_name: Optional[str] = None) -> List[Element]:
    return [e for e in elements if e.tag == tag and (class_name is None or class_name in e.classes)]


def pair_links(elements: List[Element], section_id: str, figure: str = "pair") -> List[Element]:
    """The `g.link` elements of one pair's figure (`pair`) or of its random pairs (`random`)."""
    links = []
    for link in select(elements, "g", "link"):
        section = link.within("section", "pair")
        drawn_in = link.within("div", "figure")
        if section is not None and section.attributes["id"] == section_id:
            if drawn_in is not None and figure in drawn_in.classes:
                links.append(link)
    return links


def span(text: str):
    start, end = text.split()
    return int(start), int(end)
