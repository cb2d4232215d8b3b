from django import template

from webapp.networks.cards import card_html

register = template.Library()


@register.filter(name="markdown")
def markdown(text: str):
    """``{{ network.card|markdown }}``: the card as HTML (see webapp.networks.cards)."""
    return card_html(text)
