# SPDX-License-Identifier: MIT
"""What a Python user expects of the package: a result that is a dataclass
or a Pydantic model is stored through the tool's serializer (idem.Serializer),
not refused; args_mismatch is idem.ArgsMismatch; a local tool whose first
parameter is not the connection is refused when it is defined."""
import asyncio
import dataclasses
import datetime
import json
import sqlite3
import unittest
from typing import List

import idem
from test_idem import Base

try:
    import pydantic
except ImportError:                 # make test installs python3-pydantic
    pydantic = None


@dataclasses.dataclass
class Order:
    order: int
    sku: str


@dataclasses.dataclass
class Basket:
    orders: List[Order]
    at: str = "now"


class Model:
    """A class shaped as a Pydantic 2 model (model_dump, model_validate)."""

    def __init__(self, charge, cents):
        self.charge, self.cents = charge, cents

    def model_dump(self, mode="python"):
        return {"charge": self.charge, "cents": self.cents}

    @classmethod
    def model_validate(cls, data):
        return cls(**data)

    def __eq__(self, other):
        return isinstance(other, Model) and vars(self) == vars(other)


class Cents:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, Cents) and other.n == self.n


class CentsSerializer(idem.Serializer):
    def to_json(self, value):
        return {"cents": value.n}

    def from_json(self, data):
        return Cents(data["cents"])


class SerializerTest(Base):
    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)
        self.runs = 0

    def stored(self, key):
        return json.loads(self.count("SELECT result FROM calls WHERE key = '%s'" % key))

    def test_dataclass_result_is_stored_as_its_json(self):
        @self.calls.tool
        def place_order(db, sku):
            self.runs += 1
            return Order(7, sku)
        first = place_order.run("a", "c", sku="S")
        again = place_order.run("a", "c", sku="S")
        self.assertEqual(self.stored(first.key), {"order": 7, "sku": "S"})
        # No serializer and no annotation: both get the stored JSON.
        self.assertEqual((first.result, again.result, again.replayed),
                         ({"order": 7, "sku": "S"}, {"order": 7, "sku": "S"}, True))
        self.assertEqual(self.runs, 1)

    def test_nested_dataclasses_and_models(self):
        @self.calls.tool(kind="external")
        def pay(idempotency_key, n):
            return {"basket": Basket([Order(1, "A"), Order(2, "B")]),
                    "charges": [Model("ch_1", n)]}
        out = pay("a", "c", n=5)
        self.assertEqual(out, {"basket": {"orders": [{"order": 1, "sku": "A"},
                                                     {"order": 2, "sku": "B"}], "at": "now"},
                               "charges": [{"charge": "ch_1", "cents": 5}]})
        self.assertEqual(pay("a", "c", n=5), out)

    def test_return_annotation_gives_the_type_back(self):
        @self.calls.tool
        def place_order(db, sku) -> Order:
            self.runs += 1
            return Order(8, sku)
        first = place_order.run("a", "c", sku="S")
        again = place_order.run("a", "c", sku="S")
        self.assertEqual((first.result, again.result), (Order(8, "S"), Order(8, "S")))
        self.assertEqual((first.replayed, again.replayed, self.runs), (False, True, 1))
        self.assertEqual(self.stored(first.key), {"order": 8, "sku": "S"})

    def test_serializer_given_as_a_class(self):
        @self.calls.tool(kind="external", serializer=Model)
        def charge(idempotency_key, cents):
            return Model("ch_9", cents)
        self.assertEqual(charge("a", "c", cents=3), Model("ch_9", 3))
        again = charge.run("a", "c", cents=3)
        self.assertEqual((again.result, again.id, again.key, again.replayed),
                         (Model("ch_9", 3), None, charge.key("a", "c", cents=3), True))

    def test_custom_serializer_with_id(self):
        @self.calls.tool(serializer=CentsSerializer())
        def price(db, sku):
            return idem.Result(Cents(42), id=sku)
        first = price.run("a", "c", sku="S")
        self.assertEqual((first.result, first.id), (Cents(42), "S"))
        self.assertEqual(price("a", "c", sku="S"), Cents(42))
        self.assertEqual(self.stored(first.key), {"cents": 42})

    def test_async_external(self):
        @self.calls.tool(kind="external")
        async def charge(idempotency_key, cents) -> Order:
            return Order(cents, "x")
        self.assertEqual(asyncio.run(charge("a", "c", cents=4)), Order(4, "x"))
        self.assertEqual(asyncio.run(charge("a", "c", cents=4)), Order(4, "x"))

    def test_what_stays_unstorable(self):
        # A dataclass holding what JSON has no form for: the path says where.
        @self.calls.tool
        def place_order(db, sku):
            db.execute("INSERT INTO orders(sku) VALUES(?)", (sku,))
            return Order(1, datetime.date(2026, 1, 2))
        with self.assertRaisesRegex(idem.Unstorable, r"result\.sku is a datetime\.date,"):
            place_order("a", "c", sku="S")
        self.assertEqual(self.count("SELECT count(*) FROM orders"), 0)

        class Bad(idem.Serializer):
            def to_json(self, value):
                raise ValueError("no form for this one")

        @self.calls.tool(serializer=Bad())
        def other(db, sku):
            return 1
        with self.assertRaisesRegex(idem.Unstorable, "no form for this one"):
            other("a", "c", sku="S")
        self.assertIsNone(self.calls.reply(other.key("a", "c", sku="S")))

    def test_dataclass_argument(self):
        @self.calls.tool
        def keep(db, order):
            self.runs += 1
            return order.sku
        self.assertEqual(keep("a", "c", order=Order(1, "S")), "S")
        self.assertEqual(keep("a", "c", order=Order(1, "S")), "S")
        self.assertEqual(self.runs, 1)
        self.assertEqual(keep.key("a", "c", order=Order(1, "S")),
                         keep.key("a", "c", order={"sku": "S", "order": 1}))

    def test_bad_serializer_refused_when_defined(self):
        for bad, why in ((42, "serializer must be"), (CentsSerializer, "give an instance"),
                         (int, "serializer must be")):
            with self.assertRaisesRegex(TypeError, why):
                self.calls.tool(serializer=bad)(lambda db: 1)

    @unittest.skipIf(pydantic is None, "pydantic is not installed (python3-pydantic)")
    def test_pydantic(self):
        class Charge(pydantic.BaseModel):
            charge: str
            cents: int

        @self.calls.tool(kind="external")
        def charge(idempotency_key, cents) -> Charge:
            self.runs += 1
            return Charge(charge="ch_1", cents=cents)

        @self.calls.tool(kind="external")
        def untyped(idempotency_key, cents):
            return Charge(charge="ch_2", cents=cents)
        first = charge.run("a", "c", cents=5)
        again = charge.run("a", "c", cents=5)
        self.assertEqual((first.result, again.result), (Charge(charge="ch_1", cents=5),) * 2)
        self.assertIsInstance(again.result, Charge)
        self.assertEqual((again.replayed, self.runs), (True, 1))
        self.assertEqual(untyped("a", "c", cents=6), {"charge": "ch_2", "cents": 6})


class ArgsMismatchTest(Base):
    def test_is_an_idem_error(self):
        calls = idem.Calls(self.conn)

        @calls.tool(keyargs=["sku"])
        def place_order(db, sku, note):
            db.execute("INSERT INTO orders(sku) VALUES(?)", (sku,))
            return 1
        place_order("a", "c", sku="S", note="first")
        with self.assertRaises(idem.ArgsMismatch) as cm:
            place_order("a", "c", sku="S", note="other")
        e = cm.exception
        self.assertIsInstance(e, sqlite3.OperationalError)     # as it was
        self.assertEqual((e.key, e.tool), (place_order.key("a", "c", sku="S", note="x"),
                                           "place_order"))
        self.assertRegex(str(e), "already used with other arguments")
        self.assertFalse(self.conn.in_transaction)
        self.assertEqual(self.count("SELECT count(*) FROM orders"), 1)

    # ArgsMismatch is raised on the extension's verdict, idem_refusal(message),
    # never on the message's text: a verdict of None (a stand-in for
    # idem_refusal on this connection) leaves the error as the database's,
    # whatever it says.
    def test_the_verdict_is_cs(self):
        calls = idem.Calls(self.conn)

        @calls.tool(keyargs=["sku"])
        def place_order(db, sku, note):
            return 1
        place_order("a", "c", sku="S", note="first")
        self.assertEqual(self.count("SELECT idem_refusal('idem: t: key ''%s'' was already"
                                    " used with other arguments')"
                                    % place_order.key("a", "c", sku="S", note="x")),
                         "args_mismatch")
        self.conn.create_function("idem_refusal", 1, lambda message: None)
        with self.assertRaises(sqlite3.OperationalError) as cm:
            place_order("a", "c", sku="S", note="other")
        self.assertNotIsInstance(cm.exception, idem.ArgsMismatch)
        self.assertRegex(str(cm.exception), "already used with other arguments")
        self.conn.create_function("idem_refusal", 1, lambda message: "args_mismatch")
        with self.assertRaises(idem.ArgsMismatch):
            place_order("a", "c", sku="S", note="other")

    def test_external(self):
        calls = idem.Calls(self.conn)
        sent = []

        @calls.tool(kind="external", keyargs=["to"])
        def send(idempotency_key, to, text):
            sent.append(text)
            return 1
        send("a", "c", to="bob", text="hi")
        with self.assertRaises(idem.ArgsMismatch):
            send("a", "c", to="bob", text="hello")
        self.assertEqual(sent, ["hi"])
        self.assertFalse(self.conn.in_transaction)


class FirstParameterTest(Base):
    def setUp(self):
        super().setUp()
        self.calls = idem.Calls(self.conn)

    def test_a_tool_argument_first_is_refused_when_defined(self):
        with self.assertRaisesRegex(TypeError, r"the local tool place_order takes the"
                                    r" connection as its first parameter: def"
                                    r" place_order\(db, \.\.\.\); its first parameter,"
                                    r" sku, is not named"):
            @self.calls.tool(kind="local")
            def place_order(sku, qty):
                return 1
        with self.assertRaisesRegex(TypeError, "its first parameter, db, is not named"):
            @self.calls.tool
            def annotated(db: str, qty):
                return 1

    def test_what_names_the_connection(self):
        def conn_annotated(c: sqlite3.Connection, x):
            return x

        def conn_text(c: "sqlite3.Connection", x):
            return x
        tools = [self.calls.tool(name="t%d" % i)(fn) for i, fn in enumerate((
            lambda db, x: x, lambda conn, x: x, lambda con, x: x, lambda cx, x: x,
            lambda connection, x: x, lambda database, x: x, conn_annotated, conn_text,
            lambda *a, **kw: 1))]
        self.assertEqual([t("a", "c", x=1) for t in tools], [1] * 9)


if __name__ == "__main__":
    unittest.main()
