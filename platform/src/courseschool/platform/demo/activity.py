"""The demo school's people and business: members and their subscriptions, students
and their enrolments, coupons, orders and comments. Fixed data; `school.py` writes
it. Rows name catalogue documents by slug (code, email); offsets are in days from
`now` (negative: in the past)."""

from __future__ import annotations

from typing import Any

from .catalogue import Rows

PRODUCT_AREAS: dict[str, Any] = {
    "course": "courses",
    "digital_product": "digital_products",
    "membership_plan": "membership_plans",
    "event": "events",
}


MEMBERS: Rows = (
    ("Ben Carter", "ben.carter@example.com", "community-monthly", "active", -10, "active"),
    ("Lena Fischer", "lena.fischer@example.com", "all-access-annual", "active", -84, "active"),
    ("Ravi Patel", "ravi.patel@example.com", "community-monthly", "active", -3, "trialing"),
    ("Julia Costa", "julia.costa@example.com", "community-monthly", "paused", -61, "past_due"),
    ("Sam O'Brien", "sam.obrien@example.com", "all-access-annual", "cancelled", -150, "cancelled"),
    ("Emma Laurent", "emma.laurent@example.com", None, "active", -58, None),
)


PLAN_DAYS: dict[str, Any] = {"month": 30, "year": 365}


CANCELLED_OFFSET = -7

# (name, email, enrollments of (course slug, enrolled offset, progress percent))


STUDENTS: Rows = (
    (
        "Lena Fischer",
        "lena.fischer@example.com",
        (("python-for-beginners", -86, 100), ("data-analysis-with-pandas", -40, 55)),
    ),
    ("Tom Berger", "tom.berger@example.com", (("watercolour-basics", -81, 90),)),
    ("Sofia Rossi", "sofia.rossi@example.com", (("python-for-beginners", -75, 80), ("portrait-photography", -12, 10))),
    ("Jonas Weber", "jonas.weber@example.com", (("data-analysis-with-pandas", -68, 35),)),
    ("Emma Laurent", "emma.laurent@example.com", (("watercolour-basics", -60, 100), ("portrait-photography", -30, 60))),
    ("Lucas Martin", "lucas.martin@example.com", (("python-for-beginners", -52, 45),)),
    ("Mia Kowalski", "mia.kowalski@example.com", (("portrait-photography", -47, 70),)),
    (
        "Noah Jensen",
        "noah.jensen@example.com",
        (("python-for-beginners", -33, 20), ("data-analysis-with-pandas", -9, 5)),
    ),
    ("Chloé Dubois", "chloe.dubois@example.com", (("watercolour-basics", -24, 40),)),
    ("Elias Horvat", "elias.horvat@example.com", (("data-analysis-with-pandas", -18, 15),)),
    ("Hannah Schmid", "hannah.schmid@example.com", (("python-for-beginners", -6, 10),)),
    ("Oliver Smith", "oliver.smith@example.com", (("portrait-photography", -2, 0), ("watercolour-basics", -2, 0))),
)


COUPONS: Rows = (  # valid_from / valid_until are offsets
    {"code": "WELCOME10", "discount_type": "percent", "amount": 10, "valid_from": -120, "max_redemptions": 500},
    {
        "code": "SPRING20",
        "discount_type": "fixed",
        "amount": 2000,
        "currency": "EUR",
        "valid_from": -60,
        "valid_until": 30,
        "max_redemptions": 100,
    },
    {
        "code": "SUMMER25",
        "discount_type": "percent",
        "amount": 25,
        "valid_from": -400,
        "valid_until": -300,
        "active": False,
    },
)


ORDERS: Rows = (
    ("lena.fischer@example.com", (("course", "python-for-beginners"),), -86, "paid", None),
    ("tom.berger@example.com", (("course", "watercolour-basics"),), -81, "paid", None),
    ("sofia.rossi@example.com", (("course", "python-for-beginners"),), -75, "paid", "WELCOME10"),
    ("jonas.weber@example.com", (("course", "data-analysis-with-pandas"),), -68, "paid", None),
    (
        "emma.laurent@example.com",
        (("course", "watercolour-basics"), ("digital_product", "watercolour-palette-guide")),
        -60,
        "paid",
        None,
    ),
    ("lucas.martin@example.com", (("course", "python-for-beginners"),), -52, "paid", None),
    ("mia.kowalski@example.com", (("course", "portrait-photography"),), -47, "paid", None),
    ("lena.fischer@example.com", (("course", "data-analysis-with-pandas"),), -40, "paid", None),
    (
        "noah.jensen@example.com",
        (("course", "python-for-beginners"), ("digital_product", "python-cheat-sheet")),
        -33,
        "paid",
        None,
    ),
    ("emma.laurent@example.com", (("course", "portrait-photography"),), -30, "paid", "WELCOME10"),
    ("chloe.dubois@example.com", (("course", "watercolour-basics"),), -24, "paid", None),
    ("tom.berger@example.com", (("digital_product", "portrait-lightroom-presets"),), -20, "refunded", None),
    ("elias.horvat@example.com", (("course", "data-analysis-with-pandas"),), -18, "paid", None),
    ("sofia.rossi@example.com", (("course", "portrait-photography"),), -12, "paid", "SPRING20"),
    ("ben.carter@example.com", (("membership_plan", "community-monthly"),), -10, "paid", None),
    ("hannah.schmid@example.com", (("course", "python-for-beginners"),), -6, "paid", None),
    (
        "oliver.smith@example.com",
        (("course", "portrait-photography"), ("course", "watercolour-basics")),
        -2,
        "paid",
        None,
    ),
    ("jonas.weber@example.com", (("digital_product", "portrait-lightroom-presets"),), -1, "pending", None),
)


ORDER_NUMBER_FIRST = 1001


COMMENTS: Rows = (
    ("course", "python-for-beginners", "Lena Fischer", "Clear, patient and fun. I finally understand loops!", True),
    ("course", "python-for-beginners", "Lucas Martin", "The quiz game project was the best part.", True),
    ("course", "data-analysis-with-pandas", "Jonas Weber", "Great examples with real data.", True),
    ("course", "watercolour-basics", "Tom Berger", "My sunsets look like sunsets now. Thank you Marco!", True),
    ("course", "portrait-photography", "Mia Kowalski", "Could you add a lesson on shooting outdoors?", False),
    ("post", "five-python-habits", "Noah Jensen", "Reading error messages slowly is underrated.", True),
    ("post", "choosing-watercolour-paper", "Chloé Dubois", "Which brand do you use in the course?", True),
    ("post", "welcome", "Sofia Rossi", "Happy to be here!", False),
)
