"""The verdicts: what the numbers prove about one derivative.

What a verdict is (``findings.py``), the first method's evidence from
estimates at several scales (``scales.py``), the second method's, the Taylor
remainder's rate (``taylor.py``), the evidence of one input's entries,
cheapest first (``examine.py``), beginning with what the nominal step
settles (``nominal.py``), the charges (``evidence.py``), the one
function that calls a derivative wrong (``convict.py``), and the classic test
(``classic.py``).
"""
