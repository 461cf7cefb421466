"""Build a lettered question sample from a shipped template and print its NeMo Gym row."""

import choicebox
from choicebox.jsonl import dumps

sample = choicebox.MCQASample.from_question(
    "Which genetic test identifies a specific cystic fibrosis mutation?",
    ["Karyotyping", "Polymerase Chain Reaction (PCR)", "Whole-genome sequencing"],
    "B",
)
print(dumps(sample.to_wire()).decode())
