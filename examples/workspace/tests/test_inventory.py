from src.inventory import Item, restock, total_value


def test_total_value():
    assert total_value([Item("pen", 1.5, 2), Item("ink", 3.0, 1)]) == 6.0


def test_restock():
    assert restock(Item("pen", 1.5), 3).quantity == 3
