"""Stock keeping for a small shop."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 0


def total_value(items):
    return sum(i.price * i.quantity for i in items)


def restock(item: Item, amount: int) -> Item:
    if amount <= 0:
        raise ValueError("amount must be positive")
    return Item(item.name, item.price, item.quantity + amount)
